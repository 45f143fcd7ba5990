import { afterEach, describe, expect, it } from '@jest/globals';
import express from 'express';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { HttpDrain } from './http-drain.js';
import { requestMiddleware } from './http-pipeline.js';
import { createRootLogger } from './logger.js';

/** A server with the drain first in line, a route that waits for `release`, and one that streams. */
async function serve(): Promise<{
  server: Server;
  drain: HttpDrain;
  port: number;
  release: () => void;
  finishStream: () => void;
}> {
  const drain = new HttpDrain();
  const app = express();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let finishStream!: () => void;
  const streamGate = new Promise<void>((resolve) => (finishStream = resolve));
  app.use(requestMiddleware(createRootLogger('silent'), drain));
  app.get('/slow', async (_req, res) => {
    await gate;
    res.json({ done: true });
  });
  app.get('/stream', async (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.write('first;');
    await streamGate;
    res.end('last');
  });
  app.get(['/ready', '/live', '/other'], (req, res) => void res.json({ path: req.path }));
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { server, drain, port: (server.address() as AddressInfo).port, release, finishStream };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    if (server.listening) await new Promise((resolve) => server.close(resolve));
  }
});

/** A raw connection, to send requests on one socket and read exactly what comes back. */
async function rawConnection(port: number): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let data = '';
  socket.on('data', (chunk) => (data += chunk));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, received: () => data, closed };
}

async function until(what: string, done: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('HttpDrain', () => {
  it('lets a request in flight finish within the grace, answering it with Connection: close, and refuses new connections', async () => {
    const { server, drain, port, release } = await serve();
    const conn = await rawConnection(port);
    conn.socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await until('the request to be in flight', () => drain.pending().length === 1);
    expect(drain.pending()).toEqual([
      { method: 'GET', path: '/slow', request_id: expect.any(String), age_ms: expect.any(Number) },
    ]);

    const draining = drain.drain(server, 10_000);
    expect(drain.isDraining).toBe(true);
    await expect(fetch(`http://127.0.0.1:${port}/live`)).rejects.toThrow();
    release();
    const started = Date.now();
    expect(await draining).toEqual([]);
    expect(Date.now() - started).toBeLessThan(2_000);
    await conn.closed;
    expect(conn.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(conn.received().toLowerCase()).toContain('connection: close');
  });

  it('returns what is still running after the grace; closeConnections ends it', async () => {
    const { server, drain, port } = await serve();
    const conn = await rawConnection(port);
    conn.socket.write('GET /slow HTTP/1.1\r\nHost: x\r\nX-Request-Id: stuck-1\r\n\r\n');
    await until('the request to be in flight', () => drain.pending().length === 1);
    const started = Date.now();
    const left = await drain.drain(server, 300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(left).toEqual([{ method: 'GET', path: '/slow', request_id: 'stuck-1', age_ms: expect.any(Number) }]);
    drain.closeConnections(server);
    await conn.closed;
    expect(conn.received()).toBe('');
  });

  it('answers a request arriving on an open connection while draining with 503 and Connection: close', async () => {
    const { server, drain, port, finishStream } = await serve();
    // A streamed response has sent its headers (keep-alive) before the drain: the client may send again on it.
    const conn = await rawConnection(port);
    conn.socket.write('GET /stream HTTP/1.1\r\nHost: x\r\n\r\n');
    await until('the stream to start', () => conn.received().includes('first;'));
    const draining = drain.drain(server, 10_000);
    finishStream();
    await until('the stream to end', () => conn.received().includes('last'));
    conn.socket.write('GET /other HTTP/1.1\r\nHost: x\r\n\r\n');
    await conn.closed;
    const second = conn.received().slice(conn.received().lastIndexOf('HTTP/1.1 '));
    expect(second).toMatch(/^HTTP\/1\.1 503 /);
    expect(second.toLowerCase()).toContain('connection: close');
    expect(second.toLowerCase()).toContain('retry-after: 5');
    expect(second).toContain('"error_code":"service_unavailable"');
    expect(await draining).toEqual([]);

    const probe = await rawConnection(port).catch(() => null);
    expect(probe).toBeNull(); // no new connections at all
  });

  it('passes /ready and /live through while draining (StatusService answers /ready with 503 itself)', async () => {
    const { server, drain, port, finishStream } = await serve();
    const conn = await rawConnection(port);
    conn.socket.write('GET /stream HTTP/1.1\r\nHost: x\r\n\r\n');
    await until('the stream to start', () => conn.received().includes('first;'));
    void drain.drain(server, 10_000);
    finishStream();
    await until('the stream to end', () => conn.received().includes('last'));
    conn.socket.write('GET /ready HTTP/1.1\r\nHost: x\r\n\r\n');
    await conn.closed;
    const second = conn.received().slice(conn.received().lastIndexOf('HTTP/1.1 '));
    expect(second).toMatch(/^HTTP\/1\.1 200 /);
    expect(second).toContain('{"path":"/ready"}');
    expect(second.toLowerCase()).toContain('connection: close');
  });
});
