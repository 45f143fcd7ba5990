import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface IdpAccount {
  email: string;
  name: string;
  groups: string[];
  emailVerified?: boolean;
}

export interface IdentityProvider {
  /** The issuer (http://127.0.0.1:port), known before the client is registered. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Accounts by the login typed into the provider's form; change groups between logins. */
  accounts: Map<string, IdpAccount>;
  /** Starts the provider with the relying party's redirect URI registered. */
  register(redirectUri: string, postLogoutRedirectUri: string): void;
  close(): Promise<void>;
}

/**
 * A real, certified OpenID provider (oidc-provider) on loopback with its development login form:
 * any password signs in as the login typed, whose claims (email, name, groups) the test controls.
 * The port is taken first, so the service under test can be configured with the issuer before the
 * provider knows the redirect URI.
 */
export async function startIdentityProvider(): Promise<IdentityProvider> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server = createServer((req, res) => {
    if (handler) return handler(req, res);
    res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const accounts = new Map<string, IdpAccount>();
  const clientId = 'evaluation-workspace';
  const clientSecret = 'idp-client-secret-0f5d2c7a9b';
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    register(redirectUri, postLogoutRedirectUri) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: clientId,
            client_secret: clientSecret,
            redirect_uris: [redirectUri],
            post_logout_redirect_uris: [postLogoutRedirectUri],
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_basic',
          },
        ],
        claims: { email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
        cookies: { keys: ['idp-cookie-key-for-the-test-only'] },
        ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
        async findAccount(_ctx, id) {
          const account = accounts.get(id);
          if (!account) return undefined;
          return {
            accountId: id,
            async claims() {
              return {
                sub: id,
                email: account.email,
                email_verified: account.emailVerified ?? true,
                name: account.name,
                groups: [...account.groups],
              };
            },
          };
        },
      });
      handler = provider.callback();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
