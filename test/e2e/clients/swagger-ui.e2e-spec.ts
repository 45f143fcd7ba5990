import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { browserExecutable } from '../../utils/browser.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

/**
 * Swagger UI as a person uses it, in a real browser (Debian's chromium driven by playwright-core):
 * Authorize, then Try it out on protected operations, including one whose path carries the
 * workspace id. Each way of authorizing Swagger UI offers is tried: the OAuth2 password flow
 * (e-mail as the username) and a pasted bearer token.
 */
describe('Swagger UI in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: browserExecutable(),
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Swagger UI in a fresh browser context (its own localStorage, where Authorize persists). */
  async function openDocs(): Promise<Page> {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/docs`);
    await page.locator('button.authorize').first().waitFor();
    return page;
  }

  /**
   * Opens one operation by its deep link (Swagger UI renders only the tags near the viewport),
   * presses Try it out, fills its path parameters and executes it; the status and body shown.
   */
  async function tryItOut(
    page: Page,
    tag: string,
    operationId: string,
    params: Record<string, string> = {},
  ): Promise<{ status: number; body: string }> {
    await page.goto('about:blank');
    await page.goto(`${base}/docs#/${tag}/${operationId}`);
    const block = page.locator(`#operations-${tag}-${operationId}`);
    await block.locator('button.try-out__btn').click();
    for (const [name, value] of Object.entries(params))
      await block.locator(`tr[data-param-name="${name}"] input`).fill(value);
    await block.locator('button.execute').click();
    const status = block.locator('.live-responses-table tr.response .response-col_status').first();
    await status.waitFor();
    const body = await block
      .locator('.live-responses-table tr.response .response-col_description pre')
      .first()
      .innerText();
    // An error's cell reads e.g. "403\nError: Forbidden": the status is its leading number.
    return { status: Number(/^\d{3}/.exec((await status.innerText()).trim())?.[0]), body };
  }

  it('serves the document with every path parameter a field to fill', async () => {
    const page = await openDocs();
    await page.goto('about:blank');
    await page.goto(`${base}/docs#/workspaces/listMembers`);
    const block = page.locator('#operations-workspaces-listMembers');
    await block.locator('tr[data-param-name="workspace_id"] input').waitFor({ state: 'attached' });
    await expect(block.locator('tr[data-param-name="workspace_id"]').innerText()).resolves.toContain('workspace_id');
    await page.context().close();
  });

  it('after Authorize with the OAuth2 password flow, Try it out sends the token', async () => {
    const page = await openDocs();
    const anonymous = await tryItOut(page, 'auth', 'getCurrentUser');
    expect(anonymous.status).toBe(401);

    await page.locator('button.authorize').first().click();
    const modal = page.locator('.modal-ux');
    await modal.locator('#oauth_username').fill(r.member.email);
    await modal.locator('#oauth_password').fill(r.member.password);
    await modal.locator('.auth-container:has(#oauth_username) button.authorize').click();
    // Swagger UI shows "Authorized" and a Logout button once the token endpoint answered.
    await modal
      .locator('.auth-container:has(h6:text("Authorized")) button:text("Logout")')
      .waitFor({ timeout: 10_000 })
      .catch(async () => {
        throw new Error(`Swagger UI did not authorize: ${await modal.innerText()}`);
      });
    await modal.locator('button.btn-done').first().click();

    // Authorize persists (persistAuthorization): the next load sends the token too.
    const me = await tryItOut(page, 'auth', 'getCurrentUser');
    expect(me.status).toBe(200);
    expect(JSON.parse(me.body)).toEqual(expect.objectContaining({ email: r.member.email }));
    const members = await tryItOut(page, 'workspaces', 'listMembers', { workspace_id: r.workspace.id });
    expect(members.status).toBe(200);
    expect(JSON.stringify(JSON.parse(members.body))).toContain(r.viewer.email);
    await page.context().close();
  });

  /** Swagger UI with a bearer credential pasted under Authorize → bearer. */
  async function pasteBearer(credential: string): Promise<Page> {
    const page = await openDocs();
    await page.locator('button.authorize').first().click();
    const modal = page.locator('.modal-ux');
    await modal.locator('.auth-container input[aria-label="auth-bearer-value"]').fill(credential);
    await modal.locator('.auth-container:has(input[aria-label="auth-bearer-value"]) button.authorize').click();
    await modal.locator('button.btn-done').first().click();
    return page;
  }

  it('after pasting an API key, Try it out sends it: the key works where a token does and is refused where a person must act', async () => {
    const key = (
      await t.http
        .post(`/workspaces/${r.workspace.id}/api-keys`)
        .set(r.member.auth)
        .send({ name: 'swagger', role: 'viewer' })
        .expect(201)
    ).body.key as string;
    const page = await pasteBearer(key);
    const members = await tryItOut(page, 'workspaces', 'listMembers', { workspace_id: r.workspace.id });
    expect(members.status).toBe(200);
    expect(JSON.parse(members.body).map((m: { user_id: string }) => m.user_id)).toContain(r.member.id);
    const me = await tryItOut(page, 'auth', 'getCurrentUser');
    expect(JSON.parse(me.body)).toEqual(
      expect.objectContaining({
        email: r.member.email,
        memberships: [expect.objectContaining({ workspace_id: r.workspace.id, role: 'viewer' })],
      }),
    );
    const logout = await tryItOut(page, 'auth', 'logout');
    expect(logout.status).toBe(403);
    await page.context().close();
  });

  it('after pasting a bearer token, Try it out sends it', async () => {
    const page = await pasteBearer(r.viewer.token);
    const members = await tryItOut(page, 'workspaces', 'listMembers', { workspace_id: r.workspace.id });
    expect(members.status).toBe(200);
    const me = await tryItOut(page, 'auth', 'getCurrentUser');
    expect(JSON.parse(me.body)).toEqual(expect.objectContaining({ email: r.viewer.email }));
    await page.context().close();
  });
});
