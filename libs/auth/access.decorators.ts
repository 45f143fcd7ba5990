import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiExtension,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import type { Principal, WorkspaceAccess, WorkspaceRole } from './roles.js';

export const ACCESS_RULE = 'ews:access-rule';

/**
 * Where a route finds the workspace it acts on:
 * - `{ param }`, `{ body }`, `{ query }`: a workspace id in that request part;
 * - `{ resource, param }`: the workspace of the record whose id is in that path parameter,
 *   looked up through the resolver the owning family registered (WorkspaceResourceRegistry);
 *   with `conceal`, a caller outside that workspace gets 404 as if the record did not exist
 *   (for operations whose contract declares no 403);
 * - `{ resource, query }`: the same, with the record id in a query parameter;
 * - `{ apiKeyOrHeader }`: an API key's own workspace, or, for a user's token, the workspace id in
 *   that request header (protocol endpoints such as OTLP/HTTP, whose body names no workspace);
 * - `{ apiKeyOrBody }`, `{ apiKeyOrQuery }`: an API key's own workspace, or, for a user's token, the
 *   workspace id in that body member or query parameter (what an application's backend calls with
 *   the key it exports traces with: trace feedback); a key that names one anyway must name its own.
 */
export type WorkspaceSource =
  | { param: string }
  | { body: string }
  | { query: string; optional?: boolean }
  | { resource: string; param: string; conceal?: boolean }
  | { resource: string; query: string }
  | { apiKeyOrHeader: string }
  | { apiKeyOrBody: string }
  | { apiKeyOrQuery: string };

/**
 * `apiKeys: false`: a user's token only, never an API key (creating workspaces or keys, logging
 * out, accepting an invitation). System-admin operations never take an API key.
 */
export type AccessRule =
  | { kind: 'public' }
  | { kind: 'optional-user' }
  | { kind: 'authenticated'; apiKeys?: false }
  | { kind: 'system-admin'; orSelf?: string }
  | { kind: 'workspace'; role: WorkspaceRole; from: WorkspaceSource; apiKeys?: false };

/** Whether a route takes an API key in place of a user's token. */
export function acceptsApiKeys(rule: AccessRule): boolean {
  return (rule.kind === 'authenticated' || rule.kind === 'workspace') && rule.apiKeys !== false;
}

function describe(rule: AccessRule): string {
  const who = describeWho(rule);
  return rule.kind === 'public' || rule.kind === 'optional-user' || acceptsApiKeys(rule)
    ? who
    : `${who} (a user's token, not an API key)`;
}

function describeWho(rule: AccessRule): string {
  switch (rule.kind) {
    case 'public':
      return 'public';
    case 'optional-user':
      return 'public; a bearer token, when sent, must be valid and identifies the caller';
    case 'authenticated':
      return 'any authenticated user';
    case 'system-admin':
      return rule.orSelf ? `system admin, or the user named by {${rule.orSelf}}` : 'system admin';
    case 'workspace': {
      const f = rule.from;
      const where =
        'apiKeyOrHeader' in f
          ? `the API key's workspace (with a user's token: the workspace in header ${f.apiKeyOrHeader})`
          : 'apiKeyOrBody' in f
            ? `the API key's workspace (with a user's token: ${f.apiKeyOrBody} in the body)`
            : 'apiKeyOrQuery' in f
              ? `the API key's workspace (with a user's token: query ${f.apiKeyOrQuery})`
              : 'resource' in f
                ? `the workspace of the ${f.resource} ${'param' in f ? `{${f.param}}` : `?${f.query}`}`
                : 'param' in f
                  ? `workspace {${f.param}}`
                  : 'body' in f
                    ? `workspace_id in the body (${f.body})`
                    : `workspace in query ${f.query}`;
      return `${rule.role} or above in ${where}`;
    }
  }
}

function rule(value: AccessRule) {
  const decorators = [
    SetMetadata(ACCESS_RULE, value),
    ApiExtension('x-access', { rule: value.kind, ...value, summary: describe(value) }),
  ];
  if (value.kind !== 'public' && value.kind !== 'optional-user') {
    decorators.push(
      ApiBearerAuth(),
      ApiUnauthorizedResponse({ type: ProblemResponse, description: 'Missing, invalid, expired or revoked token' }),
    );
  }
  const concealed = value.kind === 'workspace' && 'conceal' in value.from && value.from.conceal;
  // An API key where only a user's token is taken is refused with 403 (access.guard.ts), concealed or not.
  const refusesKeys = value.kind !== 'public' && value.kind !== 'optional-user' && !acceptsApiKeys(value);
  if (refusesKeys || (value.kind === 'workspace' && !concealed)) {
    decorators.push(ApiForbiddenResponse({ type: ProblemResponse, description: `Allowed: ${describe(value)}` }));
  }
  if (value.kind === 'workspace') {
    decorators.push(
      ApiNotFoundResponse({ type: ProblemResponse, description: 'The workspace or record does not exist' }),
    );
  }
  return applyDecorators(...decorators);
}

/** Anyone, without a token. */
export const Public = () => rule({ kind: 'public' });
/** Anyone; when a bearer token is sent it must be valid, and @CurrentUser() is its user (else undefined). */
export const PublicWithOptionalUser = () => rule({ kind: 'optional-user' });
/** Any authenticated user; the service decides what they see. `{ apiKeys: false }`: a user's token only. */
export const Authenticated = (options: { apiKeys?: false } = {}) => rule({ kind: 'authenticated', ...options });
/** System admins; with `orSelf`, also the user whose id is in that path parameter. */
export const SystemAdmin = (options: { orSelf?: string } = {}) => rule({ kind: 'system-admin', ...options });
/** A workspace role (or above) in the workspace named by `from`. System admins pass as owners. */
export const WorkspaceRoleRequired = (role: WorkspaceRole, from: WorkspaceSource, options: { apiKeys?: false } = {}) =>
  rule({ kind: 'workspace', role, from, ...options });

export const CurrentUser = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): Principal => ctx.switchToHttp().getRequest().principal,
);
export const CurrentWorkspace = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): WorkspaceAccess => ctx.switchToHttp().getRequest().workspaceAccess,
);
