import { Agent, request } from 'node:http';
import { launchProcess, type ServiceProcess } from './support/service-process';

jest.setTimeout(180_000);

/** Concurrent keep-alive clients, each asking again as soon as it is answered. */
const CLIENTS = 2_000;
const ROUNDS = 3;
/** A tiny task: the event loop, not the threads, is the limit, as in a real crowd. */
const TINY = JSON.stringify({ iterations: 2_000, payloadSize: 10 });

function post(url: string, agent: Agent): Promise<number> {
  return new Promise((done, fail) => {
    const req = request(
      `${url}/api/compute`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.once('end', () => done(res.statusCode ?? 0));
      },
    );
    req.once('error', fail);
    req.end(TINY);
  });
}

const refusalsIn = (metrics: string) =>
  [...metrics.matchAll(/^compute_scheduler_refusals_total\{reason="([^"]+)"\} (\S+)$/gm)].map(
    ([, reason, count]) => [reason, Number(count)] as const,
  );

/**
 * A closed crowd cannot offer more than the machine can do: every client
 * waits for its answer before it asks again. Served in line, every answer
 * arrives long before `TASK_TIMEOUT_MS`, so nothing is refused — not for the
 * queue's length, not for its delay (docs/overload.md).
 */
describe.each([
  { shape: 'one process, 2 threads', env: { CLUSTER_PROCESSES: '1', POOL_THREADS: '2' } },
  { shape: 'two processes', env: { CLUSTER_PROCESSES: '2', POOL_THREADS: '1' } },
])('a crowd of patient clients, $shape (real processes, real threads)', ({ env }) => {
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await launchProcess({
      label: 'crowd',
      env: { ...env, LOG_LEVEL: 'warn', NODE_ENV: 'production' },
      timeoutMs: 60_000,
    });
  });

  afterAll(async () => {
    await service?.shutdown();
  });

  it(`answers all of ${CLIENTS} concurrent clients, ${ROUNDS} requests each, refusing none`, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    const statuses: Record<number, number> = {};
    try {
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          for (let round = 0; round < ROUNDS; round++) {
            const status = await post(service.url, agent);
            statuses[status] = (statuses[status] ?? 0) + 1;
          }
        }),
      );
    } finally {
      agent.destroy();
    }
    const refusals = refusalsIn(await (await fetch(`${service.url}/metrics`)).text());
    expect(refusals.length).toBeGreaterThan(0);
    // Both at once, so that a failure shows why the requests were refused.
    expect({ statuses, refusals: Object.fromEntries(refusals.filter(([, n]) => n > 0)) }).toEqual({
      statuses: { 200: CLIENTS * ROUNDS },
      refusals: {},
    });
  });
});
