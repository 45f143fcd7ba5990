import { describe, expect, it } from '@jest/globals';
import { loadEnvironment } from './environment.js';
import { parseGroupRoles, rolesForGroups, ssoSettingsOf } from './sso-settings.js';

const W1 = '0b8f7a52-5d1e-4c55-9a43-2f0c6d1e9a01';
const W2 = '6c2d0e11-9f3b-4a7e-8c15-3b9d2e4f5a02';

describe('SSO settings', () => {
  it('maps groups to the highest role each names per workspace, and null where none of the groups grants one', () => {
    const roles = parseGroupRoles(
      JSON.stringify({
        team: { workspace: W1, role: 'member' },
        leads: [
          { workspace: W1, role: 'admin' },
          { workspace: W2, role: 'viewer' },
        ],
      }),
    );
    expect(rolesForGroups(roles, ['team'])).toEqual(
      new Map([
        [W1, 'member'],
        [W2, null],
      ]),
    );
    expect(rolesForGroups(roles, ['leads', 'team', 'other'])).toEqual(
      new Map([
        [W1, 'admin'],
        [W2, 'viewer'],
      ]),
    );
    expect(rolesForGroups(roles, [])).toEqual(
      new Map([
        [W1, null],
        [W2, null],
      ]),
    );
  });

  it('refuses a mapping it cannot apply, naming what is wrong', () => {
    expect(() => parseGroupRoles('{')).toThrow(/not valid JSON/);
    expect(() => parseGroupRoles('[]')).toThrow(/JSON object of group names/);
    expect(() => parseGroupRoles(JSON.stringify({ g: { workspace: 'evals', role: 'admin' } }))).toThrow(/a UUID/);
    expect(() => parseGroupRoles(JSON.stringify({ g: { workspace: W1, role: 'owner' } }))).toThrow(
      /admin, member, viewer/,
    );
    expect(() => parseGroupRoles(JSON.stringify({ g: { workspace: W1, role: 'admin', extra: 1 } }))).toThrow(
      /each grant/,
    );
  });

  it('is validated at boot: every bad SSO variable named, the client id required with the issuer', () => {
    const message = (() => {
      try {
        loadEnvironment({
          SSO_ISSUER_URL: 'https://idp.example.com',
          SSO_SCOPES: 'email profile',
          SSO_GROUP_ROLES: '{"g": {"workspace": "x", "role": "admin"}}',
          SSO_REQUIRED_DOMAINS: 'example.com, not a domain',
          SSO_RETURN_ORIGINS: 'https://app.example.com/path',
        });
      } catch (err) {
        return (err as Error).message;
      }
      return '';
    })();
    for (const name of ['SSO_CLIENT_ID', 'SSO_SCOPES', 'SSO_GROUP_ROLES', 'SSO_REQUIRED_DOMAINS', 'SSO_RETURN_ORIGINS'])
      expect(message).toMatch(new RegExp(`^  ${name}: `, 'm'));
  });

  it('is off without an issuer, and parsed once when configured', () => {
    expect(ssoSettingsOf(loadEnvironment({}))).toBeUndefined();
    const sso = ssoSettingsOf(
      loadEnvironment({
        SSO_ISSUER_URL: 'https://idp.example.com/realms/evals',
        SSO_CLIENT_ID: 'evals',
        SSO_ADMIN_GROUPS: 'ops, platform',
        SSO_RETURN_ORIGINS: 'https://app.example.com',
      }),
    )!;
    expect(sso.issuer.href).toBe('https://idp.example.com/realms/evals');
    expect(sso.scopes).toBe('openid email profile');
    expect([...sso.adminGroups!]).toEqual(['ops', 'platform']);
    expect(sso.returnOrigins.has('https://app.example.com')).toBe(true);
    expect(sso.linkExistingAccounts).toBe(false);
  });
});
