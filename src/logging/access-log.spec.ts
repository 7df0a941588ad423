import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import pino, { type LoggerOptions } from 'pino';
import { AccessLog } from './access-log';
import { fastifyLogger, LazyRequestLogger } from './lazy-request-logger';

/** A Fastify app logging as the service does (root logger, lazy request loggers, access log). */
async function loggingApp(options: LoggerOptions) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const app = Fastify({
    loggerInstance: fastifyLogger(pino(options, sink)),
    logController: new AccessLog((request) => request.url === '/unlogged'),
  });
  app.get('/ok', () => ({ ok: true }));
  app.get('/unlogged', () => ({ ok: true }));
  app.get('/server-error', (_request, reply) => reply.code(503).send({ ok: false }));
  app.get('/thrown', () => {
    throw new Error('thrown here');
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, lines };
}

type LoggingApp = Awaited<ReturnType<typeof loggingApp>>['app'];

/** The same requests to `app`: injected ones, and one over a real socket. */
async function send(app: LoggingApp): Promise<void> {
  await app.inject({ url: '/ok' });
  await app.inject({ url: '/ok?q="quoted"&b=\\&u=%C3%A9', headers: { 'accept-version': '2.x' } });
  await app.inject({ url: '/missing', remoteAddress: '::1' });
  await app.inject({ url: '/server-error' });
  await app.inject({ url: '/thrown' });
  await app.inject({ url: '/unlogged' });
  const { port } = app.server.address() as AddressInfo;
  await (await fetch(`http://127.0.0.1:${port}/ok`)).text();
}

/**
 * What differs between two runs of the same requests: the clock, the ports, and an error's
 * stack (its frames are the two apps' own).
 */
const comparable = (line: string) =>
  line
    .replace(/"time":\d+/, '"time":0')
    .replace(/"stack":"(?:[^"\\]|\\.)*"/, '"stack":""')
    .replace(/"responseTime":[\d.e-]+/, '"responseTime":0')
    .replace(/"remotePort":\d+/, '"remotePort":0')
    .replace(/127\.0\.0\.1:\d+/, '127.0.0.1:0');

const parsed = (lines: string[]) =>
  lines.map((line) => JSON.parse(line) as Record<string, unknown>);

describe(AccessLog.name, () => {
  const apps: LoggingApp[] = [];
  afterAll(() => Promise.all(apps.map((app) => app.close())));

  it('writes each access line character for character as pino writes it (ADR 0029)', async () => {
    const fast = await loggingApp({ level: 'info' });
    // A log formatter (here one that changes nothing) makes every line pino's own.
    const pinos = await loggingApp({ level: 'info', formatters: { log: (fields) => fields } });
    apps.push(fast.app, pinos.app);
    const writeFields = jest.spyOn(LazyRequestLogger.prototype, 'writeFields');
    await send(fast.app);
    const written = () => writeFields.mock.results.filter(({ value }) => value === true).length;
    // Six access lines; the thrown error's line (an Error first) made that request's child,
    // and a child's lines are pino's own.
    expect(written()).toBe(5);
    await send(pinos.app);
    expect(written()).toBe(5);
    writeFields.mockRestore();

    expect(fast.lines.map(comparable)).toEqual(pinos.lines.map(comparable));
    const access = parsed(fast.lines).filter((line) => line.msg === 'request completed');
    expect(access).toMatchObject([
      { level: 30, reqId: 'req-1', res: { statusCode: 200 }, client: 'anonymous' },
      { req: { url: '/ok?q=%22quoted%22&b=\\&u=%C3%A9', version: '2.x' } },
      { level: 40, req: { remoteAddress: '::1' }, res: { statusCode: 404 } },
      { level: 50, res: { statusCode: 503 } },
      { level: 50, res: { statusCode: 500 } },
      { level: 30, req: { remoteAddress: '127.0.0.1', remotePort: expect.any(Number) } },
    ]);
  });

  it('writes nothing at a disabled level', async () => {
    const quiet = await loggingApp({ level: 'error' });
    apps.push(quiet.app);
    await send(quiet.app);
    expect(parsed(quiet.lines).map(({ msg, res }) => [msg, res])).toEqual([
      ['request completed', { statusCode: 503 }],
      ['thrown here', { statusCode: 500 }],
      ['request completed', { statusCode: 500 }],
    ]);
  });
});
