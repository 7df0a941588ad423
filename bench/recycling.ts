/**
 * What recycling costs under steady heavy load: the built service with
 * `WORKER_MAX_TASKS=50` against the same service without recycling, in
 * alternating rounds on the same machine (issue 17's target: >= 0.97 x).
 *
 * The default shape (2 processes x 1 thread on 2 cores), the ~45 ms compute
 * task of the main bench, 8 connections always in flight. A recycled
 * thread's replacement starts first and the old one retires once it is up,
 * so the pool never runs a thread short; what remains is the CPU of the
 * replacement's start and its cold code.
 *
 *   npm run build && npx tsx bench/recycling.ts      # ROUNDS=2 SECONDS=20 by default
 */
import { loadavg } from 'node:os';
import { fixedAmount, throughput, type Target } from './lib/load';
import { startService, type Server } from './lib/servers';

const ROUNDS = Number(process.env.ROUNDS ?? 2);
const SECONDS = Number(process.env.SECONDS ?? 20);
const CONNECTIONS = 8;
const MAX_TASKS = 50;
/** About 45 ms of CPU: the heavy task of the main bench. */
const HEAVY = { iterations: 2_000_000, payloadSize: 10_000 };

async function recycled(server: Server): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  let sum = 0;
  for (const match of text.matchAll(
    /^compute_pool_threads_replaced_total\{[^}]*cause="recycled_(?:tasks|memory)"[^}]*\} (\d+)/gm,
  )) {
    sum += Number(match[1]);
  }
  return sum;
}

async function run(maxTasks: number): Promise<{ perSecond: number; recycled: number }> {
  const server = await startService(`max-tasks-${maxTasks}`, {
    CLUSTER_WORKERS: '2',
    POOL_THREADS: '1',
    WORKER_MAX_TASKS: String(maxTasks),
    LOG_LEVEL: 'warn',
  });
  try {
    const target: Target = {
      url: server.url,
      path: '/api/tasks/compute',
      method: 'POST',
      body: JSON.stringify(HEAVY),
      contentType: 'application/json',
    };
    await fixedAmount(target, CONNECTIONS, 200);
    const before = await recycled(server);
    const result = await throughput(target, CONNECTIONS, SECONDS);
    if (result.non2xx > 0 || result.errors > 0) {
      throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`);
    }
    return { perSecond: result.perSecond, recycled: (await recycled(server)) - before };
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  console.log(
    `load average before: ${loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}`,
  );
  const without: number[] = [];
  const withRecycling: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const none = await run(0);
    const fifty = await run(MAX_TASKS);
    without.push(none.perSecond);
    withRecycling.push(fifty.perSecond);
    console.log(
      `round ${round}: without recycling ${none.perSecond.toFixed(1)} req/s; ` +
        `WORKER_MAX_TASKS=${MAX_TASKS} ${fifty.perSecond.toFixed(1)} req/s ` +
        `(${fifty.recycled} threads recycled), ratio ${(fifty.perSecond / none.perSecond).toFixed(3)}`,
    );
  }
  const total = (values: number[]) => values.reduce((sum, value) => sum + value, 0);
  console.log(
    `all rounds: ratio ${(total(withRecycling) / total(without)).toFixed(3)}; ` +
      `load average after: ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
