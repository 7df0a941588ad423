import { Writable } from 'node:stream';
import Fastify from 'fastify';
import pino from 'pino';
import { fastifyLogger, withLazyChildren } from './lazy-request-logger';

/** A pino root logger at `level` whose lines are collected, parsed. */
function rootLogger(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const root = pino({ level }, sink);
  const child = jest.spyOn(root, 'child');
  return { root, lines, child };
}

describe('lazy request loggers', () => {
  it('writes lines with the request id at enabled levels; a child only for a line without fields', () => {
    const { root, lines, child } = rootLogger('info');
    const log = withLazyChildren(root).child({ reqId: 'r-1' }, { level: 'info' });
    log.info({ status: 200 }, 'request completed');
    expect(child).not.toHaveBeenCalled();
    log.warn('second');
    log.error(new Error('third'));
    expect(lines).toMatchObject([
      { level: 30, reqId: 'r-1', status: 200, msg: 'request completed' },
      { level: 40, reqId: 'r-1', msg: 'second' },
      { level: 50, reqId: 'r-1', err: { message: 'third' } },
    ]);
    expect(child).toHaveBeenCalledTimes(1);
  });

  it('writes a line with fields exactly as the child would, field for field', () => {
    const { root, lines } = rootLogger('info');
    const fields = { req: { method: 'POST', url: '/api/tasks/hash' }, responseTime: 1.5 };
    withLazyChildren(root).child({ reqId: 'r-6' }, { level: '' }).info(fields, 'done %s', 'now');
    root.child({ reqId: 'r-6' }).info(fields, 'done %s', 'now');
    const withoutTime = lines.map(({ time: _time, ...line }) => JSON.stringify(line));
    expect(withoutTime[0]).toBe(withoutTime[1]);
    expect(lines[0]).toMatchObject({ reqId: 'r-6', msg: 'done now', responseTime: 1.5 });
  });

  it('drops lines of disabled levels without making a child', () => {
    const { root, lines, child } = rootLogger('info');
    // What Fastify passes for a route without a level of its own.
    const log = withLazyChildren(root).child({ reqId: 'r-2' }, { level: '' });
    log.debug({ req: {} }, 'incoming request');
    log.trace('nothing');
    expect(lines).toEqual([]);
    expect(child).not.toHaveBeenCalled();
    expect(log.level).toBe('info');
  });

  it("honours a route's own level, which may differ from the process's", () => {
    const { root, lines } = rootLogger('info');
    const log = withLazyChildren(root).child({ reqId: 'r-3' }, { level: 'debug' });
    log.debug('shown');
    const quiet = withLazyChildren(root).child({ reqId: 'r-4' }, { level: 'error' });
    quiet.warn('hidden');
    expect(lines).toMatchObject([{ level: 20, reqId: 'r-3', msg: 'shown' }]);
  });

  it('gives children that carry the request id', () => {
    const { root, lines } = rootLogger('info');
    const log = withLazyChildren(root).child({ reqId: 'r-5' }, { level: 'info' });
    log.child({ task: 'compute' }).info('from a child');
    expect(lines).toMatchObject([{ reqId: 'r-5', task: 'compute', msg: 'from a child' }]);
  });

  it("is Fastify's logger: each request's logger is lazy, its lines carry the request id", async () => {
    const { root, lines, child } = rootLogger('info');
    const app = Fastify({ loggerInstance: fastifyLogger(root), disableRequestLogging: true });
    app.get('/quiet', () => 'ok');
    app.get('/loud', (request) => {
      request.log.info('handled');
      return 'ok';
    });
    await app.ready();
    // Fastify's own child, with its serializers, made once.
    const madeAtStart = child.mock.calls.length;
    await app.inject({ url: '/quiet' });
    await app.inject({ url: '/quiet' });
    expect(child).toHaveBeenCalledTimes(madeAtStart);
    await app.inject({ url: '/loud' });
    expect(lines).toMatchObject([{ level: 30, reqId: expect.any(String), msg: 'handled' }]);
    expect(child).toHaveBeenCalledTimes(madeAtStart + 1);
    app.log.info('from the app');
    expect(lines.at(-1)).toMatchObject({ msg: 'from the app' });
    await app.close();
  });
});
