import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ExtractJwt } from 'passport-jwt';
import {
  DomainError,
  ForbiddenError,
  NotFoundError,
  UnauthenticatedError,
  ValidationFailedError,
} from '#libs/common/domain-error.js';
import { CommonErrors } from '#libs/common/error-codes.js';
import { requestContext } from '#libs/common/request-context.js';
import { isUuid } from '#libs/common/uuid.js';
import {
  AccessRepository,
  type AccessTarget,
  type ActiveSession,
  type SessionAccess,
  type Standing,
} from './access.repository.js';
import { AccessCache } from './access-cache.js';
import { ACCESS_RULE, acceptsApiKeys, AccessRule, WorkspaceSource } from './access.decorators.js';
import { ApiKeyVerifier, bearerApiKey } from './api-key-verifier.js';
import type { Principal, WorkspaceAccess } from './roles.js';
import { type TokenClaims, TokenSigner } from './token-signer.js';
import { workspaceAccessOf } from './workspace-access.js';
import { WorkspaceResourceRegistry } from './workspace-resource.registry.js';

type AuthedRequest = Request & { principal?: Principal; workspaceAccess?: WorkspaceAccess };

/** passport-jwt's extractor: `Authorization: <scheme> <token>`, the scheme `bearer` in any case. */
const bearerToken = ExtractJwt.fromAuthHeaderAsBearerToken();

/**
 * Where the route's workspace comes from, read from the request before any query: a workspace
 * id, a record (of a table, or behind a resolver function), nothing (an optional query
 * parameter left out), or the 400 that a malformed id gets once the caller is authenticated.
 */
type Target =
  | { workspaceId: string }
  | { apiKeyWorkspace: true }
  | { resource: string; id: string; table?: string }
  | { none: true }
  | { invalid: DomainError };

/**
 * The one guard. Every route states its rule with a decorator from access.decorators.ts;
 * a route without one requires authentication (secure by default). Order of answers:
 * 401 (no valid token), 400 (malformed workspace or record id), 404 (no such workspace or
 * record), 403 (not a member, or role too low).
 *
 * A user's token costs one round trip: the JWT's signature is checked in process (HS256), then
 * one statement reads the session (not revoked, not expired, user active) together with the
 * route's workspace (a record's, for the kinds registered with their table) and the caller's
 * membership there (AccessRepository.findSessionWithAccess). What it read is kept in the
 * AccessCache, so a warm request costs none; logout, deactivation, removal and role changes
 * reach every process's cache with their commit and take effect on the next request.
 *
 * A bearer that starts with `ews_` is an API key: it acts for its creator inside its own
 * workspace only, with the lower of its role and the creator's current one; routes marked
 * `apiKeys: false` and system-admin routes refuse it (403).
 */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly access: AccessRepository,
    private readonly resources: WorkspaceResourceRegistry,
    private readonly apiKeys: ApiKeyVerifier,
    private readonly tokens: TokenSigner,
    private readonly cache: AccessCache,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_RULE, [
      context.getHandler(),
      context.getClass(),
    ]) ?? { kind: 'authenticated' };
    if (rule.kind === 'public') return true;
    const req = context.switchToHttp().getRequest<AuthedRequest>();
    if (rule.kind === 'optional-user' && !req.headers.authorization) return true;

    const target = rule.kind === 'workspace' ? this.targetOf(rule.from, req) : undefined;
    const { principal, standing } = await this.authenticate(req, target);
    req.principal = principal;
    const ctx = requestContext.getStore();
    if (ctx) Object.assign(ctx, { userId: principal.userId, apiKeyId: principal.apiKey?.id });
    if (principal.apiKey && !acceptsApiKeys(rule)) {
      throw new ForbiddenError(`API keys cannot call this operation; use a user's token (POST /auth/token)`);
    }

    if (rule.kind === 'system-admin') {
      if (principal.systemRole === 'admin') return true;
      if (rule.orSelf && req.params[rule.orSelf] === principal.userId) return true;
      throw new ForbiddenError('Only system admins may call this operation');
    }
    if (rule.kind === 'workspace' && target) {
      if ('invalid' in target) throw target.invalid;
      if ('none' in target) return true;
      const conceal = 'conceal' in rule.from && rule.from.conceal;
      const notFound = () =>
        new NotFoundError((target as { resource: string }).resource, (target as { id: string }).id);
      let workspaceId: string | null;
      if (standing) workspaceId = standing.workspaceId;
      else if ('apiKeyWorkspace' in target) workspaceId = principal.apiKey?.workspaceId ?? null;
      else if ('workspaceId' in target) workspaceId = target.workspaceId;
      else workspaceId = await this.resources.resolve(target.resource, target.id);
      if (!workspaceId) throw notFound();
      const key = principal.apiKey;
      if (key && key.workspaceId !== workspaceId) {
        if (conceal) throw notFound();
        throw new ForbiddenError(`This API key is scoped to workspace ${key.workspaceId}`);
      }
      try {
        req.workspaceAccess = workspaceAccessOf(
          workspaceId,
          principal,
          rule.role,
          standing ?? (await this.membership(workspaceId, principal.userId)),
        );
      } catch (err) {
        if (err instanceof ForbiddenError && conceal) throw notFound();
        throw err;
      }
    }
    return true;
  }

  /**
   * The caller, from an API key or a user's token; with a token and a target the statement that
   * checks the session also answers the target's workspace and the caller's membership there.
   */
  private async authenticate(
    req: AuthedRequest,
    target: Target | undefined,
  ): Promise<{ principal: Principal; standing?: Standing }> {
    const lookup: AccessTarget | undefined = !target
      ? undefined
      : 'workspaceId' in target
        ? { workspaceId: target.workspaceId }
        : 'table' in target && target.table
          ? { table: target.table, id: target.id }
          : undefined;
    const key = bearerApiKey(req.headers.authorization);
    if (key) return this.apiKeys.verify(key, { ip: req.ip }, lookup);
    const claims = this.verifyToken(req);
    const session = await this.session(claims.jti, lookup);
    if (!session || session.userId !== claims.sub)
      throw new UnauthenticatedError('The token has been revoked, or its user is deactivated');
    const principal: Principal = {
      userId: session.userId,
      email: session.email,
      displayName: session.displayName,
      systemRole: session.systemRole,
      tokenId: claims.jti,
      tokenExpiresAt: session.expiresAt,
    };
    return { principal, standing: lookup ? (session as SessionAccess) : undefined };
  }

  /**
   * The live session of a token, with the caller's standing towards `lookup` when there is one:
   * from the access cache when it holds every part, else read in one statement and kept.
   */
  private async session(tokenId: string, lookup?: AccessTarget): Promise<ActiveSession | SessionAccess | undefined> {
    const cached = lookup ? this.cache.sessionAccess(tokenId, lookup) : this.cache.session(tokenId);
    if (cached) return cached;
    const generation = this.cache.begin();
    const session = lookup
      ? await this.access.findSessionWithAccess(tokenId, lookup)
      : await this.access.findActiveSession(tokenId);
    if (session) this.cache.keep(generation, tokenId, session, lookup && 'table' in lookup ? lookup : undefined);
    return session;
  }

  /** The claims of the bearer JWT (HS256, unexpired, with a subject and an id), or 401. */
  private verifyToken(req: AuthedRequest): TokenClaims {
    const token = bearerToken(req);
    if (!token) throw new UnauthenticatedError('A bearer token is required (Authorization: Bearer <token>)');
    let claims: TokenClaims;
    try {
      claims = this.tokens.claims(token);
    } catch (err) {
      throw new UnauthenticatedError(
        (err as Error).name === 'TokenExpiredError'
          ? 'The token has expired; request a new one at POST /auth/token'
          : 'The bearer token is invalid',
      );
    }
    if (!claims.jti || !claims.sub) throw new UnauthenticatedError('The token is malformed');
    return claims;
  }

  private targetOf(from: WorkspaceSource, req: AuthedRequest): Target {
    try {
      // An API key's own workspace, known once the key is: nothing to read from the request. A
      // body or query that names a workspace anyway must name the key's (403 otherwise).
      if ('apiKeyOrHeader' in from && bearerApiKey(req.headers.authorization)) return { apiKeyWorkspace: true };
      if (('apiKeyOrBody' in from || 'apiKeyOrQuery' in from) && bearerApiKey(req.headers.authorization)) {
        const named = namedWorkspace(from, req)[2];
        if (named === undefined || named === '') return { apiKeyWorkspace: true };
      }
      if ('resource' in from) {
        const [name, id] = 'param' in from ? [from.param, req.params[from.param]] : [from.query, req.query[from.query]];
        if ('query' in from && (id === undefined || id === ''))
          throw new ValidationFailedError(`${name} is required`, [
            { field: name, message: `${name} is required in the query` },
          ]);
        if (!isUuid(id)) {
          if ('query' in from)
            throw new ValidationFailedError(`${name} must be a UUID`, [
              { field: name, message: `${name} must be a UUID` },
            ]);
          throw new DomainError(CommonErrors.invalid_identifier, `${name} must be a UUID`);
        }
        return { resource: from.resource, id, table: this.resources.tableOf(from.resource) };
      }
      const [part, name, value] = namedWorkspace(from, req);
      if (value === undefined || value === '') {
        if ('query' in from && from.optional) return { none: true };
        throw new ValidationFailedError(`${name} is required`, [
          { field: name, message: `${name} is required in the ${part}` },
        ]);
      }
      if (!isUuid(value)) {
        if (part === 'path') throw new DomainError(CommonErrors.invalid_identifier, `${name} must be a UUID`);
        throw new ValidationFailedError(`${name} must be a UUID`, [{ field: name, message: `${name} must be a UUID` }]);
      }
      return { workspaceId: value };
    } catch (err) {
      if (err instanceof DomainError) return { invalid: err };
      throw err;
    }
  }

  /** The caller's standing in a workspace found apart from the session (API keys, resolver functions). */
  private async membership(workspaceId: string, userId: string): Promise<Standing> {
    const { exists, role } = await this.access.membership(workspaceId, userId);
    return { workspaceId, workspaceExists: exists, role };
  }
}

/** Where a rule that names the workspace finds it in the request: [part, name, value]. */
function namedWorkspace(
  from: Exclude<WorkspaceSource, { resource: string }>,
  req: AuthedRequest,
): [string, string, unknown] {
  const body = (name: string): [string, string, unknown] => [
    'body',
    name,
    (req.body as Record<string, unknown> | undefined)?.[name],
  ];
  const query = (name: string): [string, string, unknown] => ['query', name, req.query[name]];
  if ('apiKeyOrHeader' in from) return ['header', from.apiKeyOrHeader, req.headers[from.apiKeyOrHeader]];
  if ('param' in from) return ['path', from.param, req.params[from.param]];
  if ('body' in from) return body(from.body);
  if ('apiKeyOrBody' in from) return body(from.apiKeyOrBody);
  if ('apiKeyOrQuery' in from) return query(from.apiKeyOrQuery);
  return query(from.query);
}
