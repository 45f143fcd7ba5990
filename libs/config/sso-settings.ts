import type { Environment } from './environment.js';

/** The workspace roles a group may grant through single sign-on (owners are never granted or taken away by it). */
export const SSO_GRANTABLE_ROLES = ['admin', 'member', 'viewer'] as const;
export type SsoGrantableRole = (typeof SSO_GRANTABLE_ROLES)[number];

export interface SsoWorkspaceGrant {
  workspace: string;
  role: SsoGrantableRole;
}

/** Each identity-provider group and the workspace roles it grants. */
export type SsoGroupRoles = ReadonlyMap<string, readonly SsoWorkspaceGrant[]>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_GROUPS = 1000;

/**
 * Parses SSO_GROUP_ROLES: `{"<group>": {"workspace": "<workspace id>", "role": "admin|member|viewer"}}`,
 * or a list of such grants per group. Throws an Error whose message says what is wrong.
 */
export function parseGroupRoles(text: string): SsoGroupRoles {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`not valid JSON (${(err as Error).message})`, { cause: err });
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error('must be a JSON object of group names');
  const entries = Object.entries(parsed as Record<string, unknown>);
  if (entries.length > MAX_GROUPS) throw new Error(`at most ${MAX_GROUPS} groups`);
  const roles = new Map<string, SsoWorkspaceGrant[]>();
  for (const [group, value] of entries) {
    if (!group || group.length > 256) throw new Error('a group name must be 1 to 256 characters');
    const grants = Array.isArray(value) ? value : [value];
    roles.set(
      group,
      grants.map((grant) => parseGrant(group, grant)),
    );
  }
  return roles;
}

function parseGrant(group: string, grant: unknown): SsoWorkspaceGrant {
  const { workspace, role, ...rest } = (grant ?? {}) as Record<string, unknown>;
  if (!grant || typeof grant !== 'object' || Object.keys(rest).length > 0)
    throw new Error(`group "${group}": each grant is {"workspace": "<workspace id>", "role": "admin|member|viewer"}`);
  if (typeof workspace !== 'string' || !UUID.test(workspace))
    throw new Error(`group "${group}": workspace must be a workspace id (a UUID)`);
  if (!SSO_GRANTABLE_ROLES.includes(role as SsoGrantableRole))
    throw new Error(`group "${group}": role must be one of ${SSO_GRANTABLE_ROLES.join(', ')}`);
  return { workspace: workspace.toLowerCase(), role: role as SsoGrantableRole };
}

/** A comma-separated list, trimmed, empty items dropped. */
export function commaList(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** The problem with a list of e-mail domains, or undefined. */
export function emailDomainsProblem(text: string): string | undefined {
  const bad = commaList(text).find((domain) => !/^(?=.{1,253}$)([a-z0-9-]{1,63}\.)+[a-z0-9-]{1,63}$/i.test(domain));
  return bad === undefined ? undefined : `"${bad}" is not a domain name (e.g. example.com)`;
}

/** The problem with a list of origins (https://app.example.com), or undefined. */
export function originsProblem(text: string): string | undefined {
  for (const item of commaList(text)) {
    let url: URL;
    try {
      url = new URL(item);
    } catch {
      return `"${item}" is not a URL`;
    }
    if (!['http:', 'https:'].includes(url.protocol) || url.origin !== item.replace(/\/$/, ''))
      return `"${item}" must be an origin: scheme, host and port only (e.g. https://app.example.com)`;
  }
  return undefined;
}

/** Single sign-on as configured (SSO_* variables), parsed once at boot. */
export interface SsoSettings {
  issuer: URL;
  clientId: string;
  /** Unset for a public client. */
  clientSecret?: string;
  /** Unset: `<PUBLIC_BASE_URL or the request's origin>/auth/sso/callback`. */
  redirectUrl?: string;
  scopes: string;
  groupsClaim: string;
  groupRoles: SsoGroupRoles;
  /** Undefined when SSO_ADMIN_GROUPS is unset: SSO logins then leave the system role alone. */
  adminGroups?: ReadonlySet<string>;
  postLogoutRedirectUrl?: string;
  returnOrigins: ReadonlySet<string>;
  linkExistingAccounts: boolean;
  allowHttpIssuer: boolean;
}

/** The e-mail domains that must sign in through SSO (lower-cased); these apply even with SSO itself unset. */
export function requiredSsoDomains(env: Pick<Environment, 'SSO_REQUIRED_DOMAINS'>): ReadonlySet<string> {
  return new Set(commaList(env.SSO_REQUIRED_DOMAINS).map((d) => d.toLowerCase()));
}

export function ssoSettingsOf(env: Environment): SsoSettings | undefined {
  if (!env.SSO_ISSUER_URL || !env.SSO_CLIENT_ID) return undefined;
  return {
    issuer: new URL(env.SSO_ISSUER_URL),
    clientId: env.SSO_CLIENT_ID,
    clientSecret: env.SSO_CLIENT_SECRET,
    redirectUrl: env.SSO_REDIRECT_URL,
    scopes: env.SSO_SCOPES,
    groupsClaim: env.SSO_GROUPS_CLAIM,
    groupRoles: env.SSO_GROUP_ROLES ? parseGroupRoles(env.SSO_GROUP_ROLES) : new Map(),
    adminGroups: env.SSO_ADMIN_GROUPS === undefined ? undefined : new Set(commaList(env.SSO_ADMIN_GROUPS)),
    postLogoutRedirectUrl: env.SSO_POST_LOGOUT_REDIRECT_URL,
    returnOrigins: new Set(commaList(env.SSO_RETURN_ORIGINS).map((o) => new URL(o).origin)),
    linkExistingAccounts: env.SSO_LINK_EXISTING_ACCOUNTS,
    allowHttpIssuer: env.SSO_ALLOW_HTTP_ISSUER,
  };
}

const RANK: Record<SsoGrantableRole, number> = { viewer: 0, member: 1, admin: 2 };

/**
 * The role each mapped workspace gets for a user in these groups: the highest any of the groups
 * grants there, or null (no membership) for a mapped workspace none of them grants.
 */
export function rolesForGroups(
  groupRoles: SsoGroupRoles,
  groups: readonly string[],
): Map<string, SsoGrantableRole | null> {
  const roles = new Map<string, SsoGrantableRole | null>();
  for (const grants of groupRoles.values()) for (const { workspace } of grants) roles.set(workspace, null);
  for (const group of new Set(groups)) {
    for (const { workspace, role } of groupRoles.get(group) ?? []) {
      const held = roles.get(workspace);
      if (!held || RANK[role] > RANK[held]) roles.set(workspace, role);
    }
  }
  return roles;
}
