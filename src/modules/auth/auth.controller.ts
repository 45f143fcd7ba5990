import { Body, Controller, Get, HttpCode, Post, Req } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { Authenticated, CurrentUser, Public } from '#libs/auth/access.decorators.js';
import type { Principal } from '#libs/auth/roles.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { AuthService } from './auth.service.js';
import { MeResponse, TokenRequest, TokenResponse, VerifyRequest, VerifyResponse } from './dto/auth.dto.js';
import { RateLimitClass } from '#libs/auth/rate-limits.js';

@ApiTags('auth')
@Controller()
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  /**
   * Trade credentials for a bearer token (JSON, or the OAuth2 password form that Swagger UI's
   * Authorize button sends). After LOGIN_MAX_FAILURES failures for one email from one address,
   * attempts are answered 429 rate_limited; when too many logins are being checked at once, 429
   * auth_busy. Both carry Retry-After.
   */
  @Post('auth/token')
  @ApiOperation({ operationId: 'issueToken' })
  @RateLimitClass('login')
  @HttpCode(200)
  @Public()
  @ApiConsumes('application/json', 'application/x-www-form-urlencoded')
  @ApiBody({ type: TokenRequest })
  @ApiOkResponse({ type: TokenResponse })
  @ApiUnauthorizedResponse({
    type: ProblemResponse,
    description: 'Wrong email or password, deactivated account, or bad reset token',
  })
  @ApiTooManyRequestsResponse({
    type: ProblemResponse,
    description:
      'rate_limited: too many failed logins; auth_busy: too many logins being checked at once. See Retry-After',
  })
  token(@Body() body: TokenRequest, @Req() req: Request): Promise<TokenResponse> {
    return this.auth.token(body, { ip: req.ip, userAgent: req.header('user-agent') });
  }

  /** Who the token belongs to, with the caller's workspace memberships. With an API key: its creator, in the key's workspace only, at the key's effective role. */
  @Get('auth/me')
  @ApiOperation({ operationId: 'getCurrentUser' })
  @Authenticated()
  @ApiOkResponse({ type: MeResponse })
  me(@CurrentUser() principal: Principal): Promise<MeResponse> {
    return this.auth.me(principal.userId, principal.tokenExpiresAt, principal.apiKey);
  }

  /** Revokes the token used for this call; it stops working at once. */
  @Post('auth/logout')
  @ApiOperation({ operationId: 'logout' })
  @HttpCode(204)
  @Authenticated({ apiKeys: false })
  @ApiNoContentResponse({ description: 'Logged out' })
  async logout(@CurrentUser() principal: Principal): Promise<void> {
    await this.auth.logout(principal);
  }

  /** For internal services (a gateway): is this token live, and whose is it? 401 when not. */
  @Post('internal/auth/verify')
  @ApiOperation({ operationId: 'verifyToken' })
  @RateLimitClass('login')
  @HttpCode(200)
  @Public()
  @ApiOkResponse({ type: VerifyResponse })
  @ApiUnauthorizedResponse({ type: ProblemResponse, description: 'The token is not live' })
  verify(@Body() body: VerifyRequest): Promise<VerifyResponse> {
    return this.auth.verify(body.token);
  }
}
