import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request } from 'express';
import { DomainError, ForbiddenError, NotFoundError, UnauthenticatedError, ValidationFailedError } from '../common/domain-error.js';
import { CommonErrors } from '../common/error-codes.js';
import { requestContext } from '../common/request-context.js';
import { isUuid } from '../common/uuid.js';
import { AccessRepository } from './access.repository.js';
import { ACCESS_RULE, acceptsApiKeys, AccessRule, WorkspaceSource } from './access.decorators.js';
import { ApiKeyVerifier, bearerApiKey } from './api-key-verifier.js';
import { lowerRole, roleAtLeast, type Principal, type WorkspaceAccess, type WorkspaceRole } from './roles.js';
import { WorkspaceResourceRegistry } from './workspace-resource.registry.js';

type AuthedRequest = Request & { principal?: Principal; user?: Principal; workspaceAccess?: WorkspaceAccess };

/**
 * The one guard. Every route states its rule with a decorator from access.decorators.ts;
 * a route without one requires authentication (secure by default). Order of answers:
 * 401 (no valid token), 400 (malformed workspace or record id), 404 (no such workspace or
 * record), 403 (not a member, or role too low).
 *
 * A bearer that starts with `ews_` is an API key: it acts for its creator inside its own
 * workspace only, with the lower of its role and the creator's current one; routes marked
 * `apiKeys: false` and system-admin routes refuse it (403).
 */
@Injectable()
export class AccessGuard extends AuthGuard('jwt') {
  constructor(
    private readonly reflector: Reflector,
    private readonly access: AccessRepository,
    private readonly resources: WorkspaceResourceRegistry,
    private readonly apiKeys: ApiKeyVerifier,
  ) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_RULE, [context.getHandler(), context.getClass()]) ?? { kind: 'authenticated' };
    if (rule.kind === 'public') return true;
    const req = context.switchToHttp().getRequest<AuthedRequest>();
    if (rule.kind === 'optional-user' && !req.headers.authorization) return true;

    const principal = await this.authenticate(context, req);
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
    if (rule.kind === 'workspace') {
      const workspaceId = await this.workspaceOf(rule.from, req);
      if (workspaceId === undefined) return true;
      const key = principal.apiKey;
      if (key && key.workspaceId !== workspaceId) {
        if ('conceal' in rule.from && rule.from.conceal) throw new NotFoundError(rule.from.resource, String(req.params[rule.from.param]));
        throw new ForbiddenError(`This API key is scoped to workspace ${key.workspaceId}`);
      }
      req.workspaceAccess = await this.roleIn(workspaceId, principal, rule.role).catch((err: unknown) => {
        if (err instanceof ForbiddenError && 'conceal' in rule.from && rule.from.conceal) throw new NotFoundError(rule.from.resource, String(req.params[rule.from.param]));
        throw err;
      });
    }
    return true;
  }

  /** The caller: an API key's principal, or the JWT strategy's (passport) for any other bearer. */
  private async authenticate(context: ExecutionContext, req: AuthedRequest): Promise<Principal> {
    const key = bearerApiKey(req.headers.authorization);
    if (key) return this.apiKeys.verify(key, { ip: req.ip });
    await super.canActivate(context);
    return req.user as Principal;
  }

  override handleRequest<T>(err: unknown, user: T, info: unknown): T {
    // A failure while checking the session (the database is down) is not the caller's fault:
    // let the filter answer it (503), never 401, so clients keep a valid token.
    if (err) throw err;
    if (!user) {
      const message = info instanceof Error ? info.message : undefined;
      const detail =
        message === 'No auth token' ? 'A bearer token is required (Authorization: Bearer <token>)'
        : message === 'jwt expired' ? 'The token has expired; request a new one at POST /auth/token'
        : 'The bearer token is invalid';
      throw new UnauthenticatedError(detail);
    }
    return user;
  }

  private async workspaceOf(from: WorkspaceSource, req: AuthedRequest): Promise<string | undefined> {
    if ('apiKeyOrHeader' in from && req.principal?.apiKey) return req.principal.apiKey.workspaceId;
    if ('resource' in from) {
      const [name, id] = 'param' in from ? [from.param, req.params[from.param]] : [from.query, req.query[from.query]];
      if ('query' in from && (id === undefined || id === '')) throw new ValidationFailedError(`${name} is required`, [{ field: name, message: `${name} is required in the query` }]);
      if (!isUuid(id)) {
        if ('query' in from) throw new ValidationFailedError(`${name} must be a UUID`, [{ field: name, message: `${name} must be a UUID` }]);
        throw new DomainError(CommonErrors.invalid_identifier, `${name} must be a UUID`);
      }
      const workspaceId = await this.resources.resolve(from.resource, id);
      if (!workspaceId) throw new NotFoundError(from.resource, id);
      return workspaceId;
    }
    const [part, name, value] =
      'apiKeyOrHeader' in from ? ['header', from.apiKeyOrHeader, req.headers[from.apiKeyOrHeader]]
      : 'param' in from ? ['path', from.param, req.params[from.param]]
      : 'body' in from ? ['body', from.body, (req.body as Record<string, unknown> | undefined)?.[from.body]]
      : ['query', from.query, req.query[from.query]];
    if (value === undefined || value === '') {
      if ('query' in from && from.optional) return undefined;
      throw new ValidationFailedError(`${name} is required`, [{ field: name, message: `${name} is required in the ${part}` }]);
    }
    if (!isUuid(value)) {
      if (part === 'path') throw new DomainError(CommonErrors.invalid_identifier, `${name} must be a UUID`);
      throw new ValidationFailedError(`${name} must be a UUID`, [{ field: name, message: `${name} must be a UUID` }]);
    }
    return value;
  }

  private async roleIn(workspaceId: string, principal: Principal, required: WorkspaceRole): Promise<WorkspaceAccess> {
    const { exists, role } = await this.access.membership(workspaceId, principal.userId);
    if (!exists) throw new NotFoundError('workspace', workspaceId);
    if (principal.systemRole === 'admin') {
      return { workspaceId, role: 'owner', viaSystemAdmin: role !== 'owner' };
    }
    if (!role) throw new ForbiddenError(`You are not a member of workspace ${workspaceId}`);
    const effective = principal.apiKey ? lowerRole(role, principal.apiKey.role) : role;
    if (!roleAtLeast(effective, required)) {
      const whose = principal.apiKey ? `this API key's is ${effective} (key role ${principal.apiKey.role}, its creator's ${role})` : `yours is ${role}`;
      throw new ForbiddenError(`This operation needs the ${required} role or above in the workspace; ${whose}`);
    }
    return { workspaceId, role: effective, viaSystemAdmin: false };
  }
}

