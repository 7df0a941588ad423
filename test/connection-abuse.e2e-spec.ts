import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Agent, request as httpRequest, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { postJson, startApp, type RunningApp } from './support/http-app';
import { waitUntil } from './support/poll';
import { firstBody, rawExchange, rawRequest } from './support/raw-http';

// Abuse at the connection level, over raw sockets: slow headers and slow bodies (slowloris)
// are cut off by the configured timeouts, and so is a client that stops reading its answer;
// thousands of idle connections do not stop new requests, and pipelining and keep-alive
// clients work.

jest.setTimeout(90_000);

const TIMEOUTS = {
  HTTP_HEADERS_TIMEOUT_MS: '1000',
  HTTP_REQUEST_TIMEOUT_MS: '2000',
  // Node's client agent reuses a connection only if the server's hint leaves it over a second.
  HTTP_KEEP_ALIVE_TIMEOUT_MS: '2500',
  TASK_TIMEOUT_MS: '3000',
  HTTP_CONNECTION_TIMEOUT_MS: '4000',
};
const IDLE_CONNECTIONS = Number(process.env.IDLE_CONNECTIONS ?? 2_000);

/** Opens a TCP connection and resolves once it is established. */
async function openSocket(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  // Reading lets the socket see the server's FIN, so a close by the server is noticed.
  socket.resume();
  await once(socket, 'connect');
  return socket;
}

/** Connections the in-process server holds open. */
function serverConnections(service: RunningApp): Promise<number> {
  const server: Server = service.app.getHttpServer();
  return new Promise((done, fail) =>
    server.getConnections((error, count) => (error ? fail(error) : done(count))),
  );
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

describe('Connection-level abuse (raw sockets)', () => {
  let service: RunningApp;
  let port: number;

  beforeAll(async () => {
    service = await startApp(TIMEOUTS);
    port = Number(new URL(service.url).port);
  });
  afterAll(() => service.close());

  it('cuts off slow headers with 408 REQUEST_TIMEOUT', async () => {
    // One header line every 200 ms, for up to 12 s: far longer than the headers timeout.
    const parts = ['GET /health/live HTTP/1.1\r\nhost: x\r\n'];
    for (let i = 0; i < 60; i++) parts.push(`x-slow-${i}: 1\r\n`);
    const started = Date.now();
    const answer = await rawExchange(port, parts, { pauseMs: 200, waitMs: 15_000 });
    console.log(`slow headers cut off after ${Date.now() - started} ms`);
    expect({ statuses: answer.statuses, closed: answer.closed }).toEqual({
      statuses: [408],
      closed: true,
    });
    expect(firstBody(answer.text)).toMatchObject({ status: 408, code: 'REQUEST_TIMEOUT' });
  });

  it('cuts off a slow body with 408 REQUEST_TIMEOUT', async () => {
    const head = rawRequest(
      'POST',
      '/api/tasks/factorial',
      { 'content-type': 'application/json', 'content-length': '60' },
      '',
    );
    const parts: Array<string | Buffer> = [head, '{"n":'];
    for (let i = 0; i < 55; i++) parts.push(' ');
    const started = Date.now();
    const answer = await rawExchange(port, parts, { pauseMs: 200, waitMs: 15_000 });
    console.log(`slow body cut off after ${Date.now() - started} ms`);
    expect({ statuses: answer.statuses, closed: answer.closed }).toEqual({
      statuses: [408],
      closed: true,
    });
    expect(firstBody(answer.text)).toMatchObject({ code: 'REQUEST_TIMEOUT' });
  });

  it('closes a connection that never sends anything', async () => {
    const socket = await openSocket(port);
    const started = Date.now();
    const closed = once(socket, 'close');
    expect(await waitFor(() => socket.destroyed || socket.readableEnded, 12_000)).toBe(true);
    await closed;
    console.log(`silent connection closed after ${Date.now() - started} ms`);
  });

  it('closes a connection whose client stops reading its answer', async () => {
    // Random bytes do not compress: the answer is larger than the body, far more than the
    // kernel's buffers hold, so the server's writes stall once the client stops reading.
    const body = randomBytes(16 * 1024 * 1024);
    const before = await serverConnections(service);
    const socket = await openSocket(port);
    let received = 0;
    let status = '';
    socket.on('data', (chunk: Buffer) => {
      if (received === 0) {
        status = chunk.toString('latin1', 0, 12);
        socket.pause();
      }
      received += chunk.length;
    });
    socket.write(
      'POST /api/tasks/compress?format=gzip&level=1 HTTP/1.1\r\nhost: x\r\n' +
        `content-type: application/octet-stream\r\ncontent-length: ${body.length}\r\n\r\n`,
    );
    socket.write(body);
    expect(await waitFor(() => received > 0, 20_000)).toBe(true);
    expect(status).toBe('HTTP/1.1 200');
    const started = Date.now();
    // Silent past HTTP_CONNECTION_TIMEOUT_MS (4 s; checked every second): the server closes it.
    // The paused client would not see the close: the server's own count says when.
    await waitUntil(
      'the server to close the stalled connection',
      async () => (await serverConnections(service)) <= before,
      { timeoutMs: 20_000 },
    );
    const closed = once(socket, 'close');
    socket.resume();
    await closed;
    console.log(
      `client that stopped reading: cut off after ${Date.now() - started} ms, ` +
        `${received} of more than ${body.length} bytes sent`,
    );
    expect(received).toBeLessThan(body.length);
  });

  it(`serves new requests while ${IDLE_CONNECTIONS} idle connections are open, then closes them`, async () => {
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < IDLE_CONNECTIONS; i++) {
        const socket = await openSocket(port);
        // Half of them start a request and stall, the rest never say a word.
        if (i % 2 === 0) socket.write('GET /health/live HTTP/1.1\r\nhost: x\r\n');
        sockets.push(socket);
      }
      const started = performance.now();
      const response = await postJson(`${service.url}/api/tasks/factorial`, { n: 50 });
      const live = await fetch(`${service.url}/health/live`);
      console.log(
        `with ${sockets.length} idle connections open: a task and a probe answered in ` +
          `${Math.round(performance.now() - started)} ms`,
      );
      expect([response.status, live.status]).toEqual([200, 200]);
      // Every idle connection is closed by the server's timeouts, none by us.
      const allClosed = await waitFor(() => sockets.every((socket) => socket.destroyed), 20_000);
      const open = sockets.filter((socket) => !socket.destroyed).length;
      expect({ allClosed, open }).toEqual({ allClosed: true, open: 0 });
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  it('answers pipelined requests in order', async () => {
    const pipeline = Buffer.concat([
      rawRequest('GET', '/health/live', {}),
      rawRequest(
        'POST',
        '/api/tasks/factorial',
        { 'content-type': 'application/json' },
        '{"n":10}',
      ),
      rawRequest('POST', '/api/tasks/nope', { 'content-type': 'application/json' }, '{}'),
      rawRequest('GET', '/api/tasks', { connection: 'close' }),
    ]);
    const answer = await rawExchange(port, [pipeline], { waitMs: 15_000 });
    expect({ statuses: answer.statuses, closed: answer.closed }).toEqual({
      statuses: [200, 200, 404, 200],
      closed: true,
    });
    expect(answer.text).toContain('"digits":"3628800"');
  });

  it('serves a keep-alive client on one connection, and closes it once idle', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<Socket>();
    const get = (path: string) =>
      new Promise<number>((resolve, reject) => {
        const request = httpRequest({ host: '127.0.0.1', port, path, agent }, (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
        });
        request.on('socket', (socket: Socket) => sockets.add(socket));
        request.on('error', reject);
        request.end();
      });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++)
        statuses.push(await get(i % 2 === 0 ? '/health/live' : '/api/tasks'));
      expect(statuses).toEqual(Array.from({ length: 20 }, () => 200));
      expect(sockets.size).toBe(1);
      const [socket] = [...sockets];
      // Past the keep-alive timeout the server closes the idle connection.
      expect(await waitFor(() => socket!.destroyed, 10_000)).toBe(true);
      expect(await get('/health/live')).toBe(200);
    } finally {
      agent.destroy();
    }
  });
});
