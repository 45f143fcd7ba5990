export class LiveResponse {
  /** Always `ok` when the process answers. */
  status: 'ok';
  /** Seconds since the process started. */
  uptime_seconds: number;
  /** Service version (package.json). */
  version: string;
}
