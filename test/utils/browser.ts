import { existsSync } from 'node:fs';

/**
 * The browser the client tests drive: Debian's chromium (`apt-get install chromium`, which
 * .ci/run does when it is missing), or the one CHROMIUM_PATH names.
 */
export function browserExecutable(): string {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(
    (p): p is string => !!p,
  );
  const found = candidates.find((p) => existsSync(p));
  if (!found)
    throw new Error(
      `no chromium at ${candidates.join(', ')}: install it (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  return found;
}
