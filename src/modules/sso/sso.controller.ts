import { Controller, Get, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBadGatewayResponse,
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiFoundResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiSeeOtherResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated, CurrentUser, Public } from '#libs/auth/access.decorators.js';
import { RateLimitClass } from '#libs/auth/rate-limits.js';
import type { Principal } from '#libs/auth/roles.js';
import { RequestOrigin } from '#libs/common/file-answer.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { TokenResponse } from '../auth/dto/auth.dto.js';
import { SsoCallbackQuery, SsoLoginQuery, SsoLogoutResponse } from './dto/sso.dto.js';
import { SSO_LOGIN_COOKIE, SSO_LOGIN_SECONDS } from './sso-login-cookie.js';
import { SsoService } from './sso.service.js';

const COOKIE_PATH = '/auth/sso';

/** The named cookie of the request, or undefined. */
function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.header('cookie') ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

@ApiTags('auth')
@Controller('auth/sso')
export class SsoController {
  constructor(private readonly sso: SsoService) {}

  /**
   * Starts single sign-on: a redirect to the identity provider's authorization endpoint (code flow,
   * PKCE S256, state and nonce), with a sealed, HTTP-only cookie the callback needs within 10
   * minutes. Open it in a browser.
   */
  @Get('login')
  @RateLimitClass('login')
  @ApiOperation({ operationId: 'startSsoLogin' })
  @Public()
  @ApiFoundResponse({ description: "To the identity provider (Location); sets the login's cookie" })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, sso_return_not_allowed' })
  @ApiNotFoundResponse({ type: ProblemResponse, description: 'sso_not_configured' })
  @ApiBadGatewayResponse({ type: ProblemResponse, description: 'sso_provider_unavailable' })
  async login(@Query() query: SsoLoginQuery, @RequestOrigin() origin: string, @Res() res: Response): Promise<void> {
    const { location, cookie, secure } = await this.sso.begin(query, origin);
    res.cookie(SSO_LOGIN_COOKIE, cookie, {
      httpOnly: true,
      sameSite: 'lax',
      secure,
      path: COOKIE_PATH,
      maxAge: SSO_LOGIN_SECONDS * 1000,
    });
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, location);
  }

  /**
   * Where the identity provider sends the browser back. Proves the login (state against the
   * cookie, the code traded with the PKCE verifier, the ID token's signature, issuer, audience and
   * nonce), provisions the account and its mapped roles, and issues a bearer token: as JSON, or,
   * when the login named `return_to`, by a redirect there with the token in the URL's fragment.
   */
  @Get('callback')
  @RateLimitClass('login')
  @ApiOperation({ operationId: 'issueSsoToken' })
  @Public()
  @ApiOkResponse({ type: TokenResponse, description: 'The session token (never cached)' })
  @ApiSeeOtherResponse({ description: 'To the return_to address, the token in its fragment' })
  @ApiBadRequestResponse({ type: ProblemResponse, description: 'validation_failed, sso_state_invalid' })
  @ApiUnauthorizedResponse({
    type: ProblemResponse,
    description: 'sso_denied, sso_login_failed, account_deactivated',
  })
  @ApiForbiddenResponse({ type: ProblemResponse, description: 'sso_identity_unusable' })
  @ApiConflictResponse({ type: ProblemResponse, description: 'sso_account_exists, sso_identity_conflict' })
  @ApiNotFoundResponse({ type: ProblemResponse, description: 'sso_not_configured' })
  @ApiBadGatewayResponse({ type: ProblemResponse, description: 'sso_provider_unavailable' })
  async callback(@Query() query: SsoCallbackQuery, @Req() req: Request, @Res() res: Response): Promise<void> {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Referrer-Policy', 'no-referrer');
    // Spent whatever happens next: a login's cookie serves one callback.
    res.clearCookie(SSO_LOGIN_COOKIE, { path: COOKIE_PATH });
    const { token, returnTo } = await this.sso.complete(query, cookieOf(req, SSO_LOGIN_COOKIE), {
      ip: req.ip,
      userAgent: req.header('user-agent'),
    });
    if (!returnTo) {
      res.status(200).json(token);
      return;
    }
    const fragment = new URLSearchParams({
      access_token: token.access_token,
      token_type: token.token_type,
      expires_in: String(token.expires_in),
      expires_at: token.expires_at.toISOString(),
    });
    res.redirect(303, `${returnTo.split('#')[0]}#${fragment}`);
  }

  /**
   * Ends the session of this token at once (as POST /auth/logout does) and answers the identity
   * provider's logout URL, for the browser to open so the provider's session ends too.
   */
  @Post('logout')
  @ApiOperation({ operationId: 'logoutSso' })
  @HttpCode(200)
  @Authenticated({ apiKeys: false })
  @ApiOkResponse({ type: SsoLogoutResponse })
  @ApiBadRequestResponse({
    type: ProblemResponse,
    description: 'malformed_json: a body was sent (none is taken) and is not JSON',
  })
  logout(@CurrentUser() principal: Principal): Promise<SsoLogoutResponse> {
    return this.sso.logout(principal);
  }
}
