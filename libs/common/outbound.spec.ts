import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { configureOutbound, outboundFetch, outboundRefusal, outboundRequest } from './outbound.js';

describe('outbound policy', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      // A redirect to the cloud metadata address: each hop is checked like the first.
      if (req.url === '/to-metadata') return res.writeHead(302, { location: 'http://169.254.169.254/latest/' }).end();
      res.end('pong');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    configureOutbound({ blockPrivate: false });
    await new Promise((resolve) => server.close(resolve));
  });

  it('never allows link-local and cloud metadata addresses, in any spelling', () => {
    for (const address of [
      '169.254.169.254',
      '::ffff:169.254.169.254',
      '[fe80::1]',
      'fd00:ec2::254',
      '100.100.100.200',
      '0.0.0.0',
      '224.0.0.1',
    ]) {
      expect(outboundRefusal(address, { blockPrivate: false })).toMatch(/never calls/);
    }
  });

  it('allows loopback and private addresses unless OUTBOUND_BLOCK_PRIVATE is on; public ones always', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '192.168.0.7', '::1', 'fd12:3456::1']) {
      expect(outboundRefusal(address, { blockPrivate: false })).toBeNull();
      expect(outboundRefusal(address, { blockPrivate: true })).toMatch(/OUTBOUND_BLOCK_PRIVATE/);
    }
    expect(outboundRefusal('8.8.8.8', { blockPrivate: true })).toBeNull();
    expect(outboundRefusal('2606:4700::1111', { blockPrivate: true })).toBeNull();
  });

  it('refuses at connect time, for addresses in the URL and for names that resolve to them', async () => {
    configureOutbound({ blockPrivate: false });
    expect(await (await outboundFetch(`http://127.0.0.1:${port}/`)).text()).toBe('pong');
    await expect(outboundFetch('http://169.254.169.254/latest/meta-data/')).rejects.toThrow(
      expect.objectContaining({ cause: expect.objectContaining({ code: 'EOUTBOUND_BLOCKED' }) }),
    );

    configureOutbound({ blockPrivate: true });
    await expect(outboundFetch(`http://127.0.0.1:${port}/`)).rejects.toThrow(
      expect.objectContaining({
        cause: expect.objectContaining({ message: expect.stringContaining('OUTBOUND_BLOCK_PRIVATE') }),
      }),
    );
    await expect(outboundFetch(`http://localhost:${port}/`)).rejects.toThrow(
      expect.objectContaining({ cause: expect.objectContaining({ message: expect.stringContaining('localhost: ') }) }),
    );
    configureOutbound({ blockPrivate: false });
    expect((await outboundFetch(`http://localhost:${port}/`)).status).toBe(200);
  });

  it('holds outboundRequest (the SUT calls) to the same policy, on every redirect hop too', async () => {
    const get = (url: string) => outboundRequest(url, { method: 'GET', headers: {} });
    configureOutbound({ blockPrivate: false });
    expect((await get(`http://127.0.0.1:${port}/`)).text).toBe('pong');
    await expect(get('http://169.254.169.254/latest/meta-data/')).rejects.toThrow(
      expect.objectContaining({ code: 'EOUTBOUND_BLOCKED' }),
    );
    await expect(get(`http://127.0.0.1:${port}/to-metadata`)).rejects.toThrow(
      expect.objectContaining({ code: 'EOUTBOUND_BLOCKED' }),
    );
    configureOutbound({ blockPrivate: true });
    await expect(get(`http://localhost:${port}/`)).rejects.toThrow('OUTBOUND_BLOCK_PRIVATE');
    configureOutbound({ blockPrivate: false });
  });
});
