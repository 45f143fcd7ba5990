import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, IsUrl, MaxLength } from 'class-validator';
import { ValidateIfPresent } from '#libs/common/dto-decorators.js';

export class SsoLoginQuery {
  /**
   * Where the browser goes after the login, its token in the URL's fragment
   * (`#access_token=…&token_type=bearer&expires_in=…&expires_at=…`); its origin must be one
   * SSO_RETURN_ORIGINS lists. Without it the callback answers the token as JSON.
   */
  @ApiPropertyOptional({ example: 'https://evals.example.com/app/signed-in' })
  @ValidateIfPresent()
  @IsUrl({ require_protocol: true, protocols: ['http', 'https'], require_tld: false })
  @MaxLength(2000)
  return_to?: string;
}

/**
 * What the identity provider appends to the redirect URI: the authorization code and state, or
 * an error; `iss` (RFC 9207) and the session or hint parameters some providers add are accepted.
 */
export class SsoCallbackQuery {
  @ApiPropertyOptional({ example: 'Qcb0Orv1zh30vL1MPRsbm-diHiMwcLyZvn1arpZv-Jx' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(4096)
  code?: string;

  @ApiPropertyOptional({ example: 'f0QvZ3NQb2NmR1hLbXVyUjZjZ2RfQ2hhbmdlTWU' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(512)
  state?: string;

  /** The provider's error code (`access_denied`, `login_required`…) when the login did not succeed. */
  @ApiPropertyOptional({ example: 'access_denied' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(200)
  error?: string;

  @ApiPropertyOptional({ example: 'The user cancelled the login' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  error_description?: string;

  @ApiPropertyOptional({ example: 'https://idp.example.com/errors/access_denied' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  error_uri?: string;

  /** The issuer that answered (RFC 9207); checked against the configured one. */
  @ApiPropertyOptional({ example: 'https://idp.example.com/realms/evals' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  iss?: string;

  /** The provider's session (Keycloak, Entra ID); not used. */
  @ApiPropertyOptional({ example: '7d1f3c1e-2b0a-4a4e-9a1c-3f0b6e2d9c11' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  session_state?: string;

  /** The scopes granted (Google); not used. */
  @ApiPropertyOptional({ example: 'openid email profile' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(2000)
  scope?: string;

  /** Google's account index; not used. */
  @ApiPropertyOptional({ example: '0' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(20)
  authuser?: string;

  /** Google's hosted domain; not used. */
  @ApiPropertyOptional({ example: 'example.com' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(253)
  hd?: string;

  /** The prompt the provider showed (Google); not used. */
  @ApiPropertyOptional({ example: 'consent' })
  @ValidateIfPresent()
  @IsString()
  @MaxLength(200)
  prompt?: string;
}

export class SsoLogoutResponse {
  /** Always true: the token of this call is revoked. */
  @ApiProperty({ example: true })
  logged_out: true;

  /**
   * The identity provider's RP-initiated logout URL, for the browser to open so the provider's
   * own session ends too; null when the provider offers none or single sign-on is not configured.
   */
  @ApiProperty({
    type: 'string',
    nullable: true,
    example:
      'https://idp.example.com/session/end?client_id=evals&post_logout_redirect_uri=https%3A%2F%2Fevals.example.com%2F',
  })
  end_session_url: string | null;
}
