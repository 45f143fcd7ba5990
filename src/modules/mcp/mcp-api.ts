import type { LoopbackClient, LoopbackRequest } from '#libs/common/loopback-client.js';

/** The caller an MCP request authenticated as (the access guard's principal, reduced to what tools need). */
export interface McpCaller {
  userId: string;
  /** Set for an API key: the one workspace it acts in. */
  apiKeyWorkspaceId?: string;
}

/** What the API answered when it refused a call: its status and problem+json body. */
export class ApiRefusal extends Error {
  constructor(
    readonly status: number,
    readonly problem: { title?: string; detail?: string; error_code?: string; errors?: unknown },
  ) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`);
  }
}

/** A tool's argument that cannot be used as given, said before any call is made. */
export class ToolInputError extends Error {}

interface Membership {
  workspace_id: string;
  workspace_name?: string;
  role: string;
}

/** A path with its ids percent-encoded: path`/runs/${id}/gate`. */
export function path(strings: TemplateStringsArray, ...ids: Array<string | number>): string {
  return strings.reduce((out, part, i) => out + part + (i < ids.length ? encodeURIComponent(String(ids[i])) : ''), '');
}

/**
 * The REST API as the tools call it: every call goes to this process's HTTP listener with the MCP
 * caller's credentials (LoopbackClient), so the guard, roles, isolation, validation and audit are
 * the operations' own; anything but 2xx becomes an ApiRefusal carrying the problem.
 */
export class McpApi {
  private memberships?: Membership[];

  constructor(
    private readonly client: LoopbackClient,
    readonly caller: McpCaller,
  ) {}

  get<T>(to: string, query?: LoopbackRequest['query']): Promise<T> {
    return this.send<T>({ method: 'GET', path: to, query });
  }

  post<T>(to: string, body: unknown, query?: LoopbackRequest['query']): Promise<T> {
    return this.send<T>({ method: 'POST', path: to, body, query });
  }

  async send<T>(request: LoopbackRequest): Promise<T> {
    const answer = await this.client.send(request);
    if (answer.status >= 200 && answer.status < 300) return answer.body as T;
    const problem = typeof answer.body === 'object' && answer.body !== null ? answer.body : { detail: answer.body };
    throw new ApiRefusal(answer.status, problem as ApiRefusal['problem']);
  }

  /**
   * The workspace a tool acts in: the one named, else an API key's own, else a user's only
   * membership; a user of several workspaces is asked to name one (their memberships listed).
   */
  async workspace(named?: string): Promise<string> {
    if (named) return named;
    if (this.caller.apiKeyWorkspaceId) return this.caller.apiKeyWorkspaceId;
    this.memberships ??= (await this.get<{ memberships: Membership[] }>('/auth/me')).memberships;
    if (this.memberships.length === 1) return this.memberships[0].workspace_id;
    const listed = this.memberships.map((m) => `${m.workspace_id} (${m.workspace_name ?? 'unnamed'}, ${m.role})`);
    throw new ToolInputError(
      this.memberships.length === 0
        ? 'You are not a member of any workspace.'
        : `workspace_id is required: you are a member of ${this.memberships.length} workspaces: ${listed.join('; ')}`,
    );
  }
}
