import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';
import { postJson } from './support/http-app';
import { waitUntil } from './support/poll';
import { startService, type ServiceProcess } from './support/service-process';

jest.setTimeout(60_000);

const SHUTDOWN_TIMEOUT_EXIT = 3;

async function poolRunning(service: ServiceProcess): Promise<number> {
  const health = (await (await fetch(`${service.url}/health`)).json()) as any;
  return health.details.pool.running as number;
}

/** One GET over a keep-alive agent; resolves with the socket it used. */
function keepAliveGet(agent: Agent, url: string): Promise<{ status: number; socket: Socket }> {
  return new Promise((done, fail) => {
    const req = request(url, { agent }, (response) => {
      response.resume();
      response.on('end', () => done({ status: response.statusCode ?? 0, socket: req.socket! }));
    });
    req.on('error', fail);
    req.end();
  });
}

describe('graceful shutdown of one process (real process, real signals)', () => {
  let service: ServiceProcess | undefined;

  afterEach(async () => {
    await service?.stop();
    service = undefined;
  });

  it('closes idle keep-alive connections and exits 0 once in-flight tasks finish', async () => {
    const single = await startService({ CLUSTER_PROCESSES: '1', POOL_THREADS: '1' });
    service = single;
    const agent = new Agent({ keepAlive: true });
    const { status, socket } = await keepAliveGet(agent, `${single.url}/health/live`);
    expect(status).toBe(200);
    const socketClosed = new Promise<void>((done) => socket.once('close', () => done()));

    const inFlight = postJson(`${single.url}/api/tasks/sleep`, { ms: 1_500 });
    await waitUntil('the task to run', async () => (await poolRunning(single)) === 1);
    single.child.kill('SIGTERM');

    await socketClosed;
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(response.headers.get('connection')).toBe('close');
    expect(await single.exited).toEqual({ code: 0, signal: null });
    agent.destroy();
  });

  it('cancels what is left when the budget runs out, with 503 SHUTTING_DOWN and its own exit code', async () => {
    const single = await startService({
      CLUSTER_PROCESSES: '1',
      POOL_THREADS: '1',
      SHUTDOWN_TIMEOUT_MS: '500',
    });
    service = single;
    const running = postJson(`${single.url}/api/tasks/sleep`, { ms: 20_000 });
    const queued = postJson(`${single.url}/api/tasks/sleep`, { ms: 20_000 });
    await waitUntil('the task to run', async () => (await poolRunning(single)) === 1);
    single.child.kill('SIGTERM');

    for (const response of await Promise.all([running, queued])) {
      expect(response.status).toBe(503);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(((await response.json()) as any).code).toBe('SHUTTING_DOWN');
    }
    expect(await single.exited).toEqual({ code: SHUTDOWN_TIMEOUT_EXIT, signal: null });
  });
});
