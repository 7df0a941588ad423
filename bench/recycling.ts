/**
 * What recycling costs under steady heavy load: the built service with
 * `WORKER_MAX_TASKS=50` against the same service without recycling (issue
 * 17's target: >= 0.97 x). On a shared machine whose load swings by 2 x from
 * one minute to the next, one after the other measures the machine, not
 * recycling: so both run at the same time, under the same load, sharing the
 * cores, and each round compares what they got.
 *
 * The default shape (2 processes x 1 thread each), the ~45 ms compute task
 * of the main bench, 8 connections always in flight on each. A recycled
 * thread's replacement starts first and the old one retires once it is up,
 * so the pool never runs a thread short; what remains is the CPU of the
 * replacement's start and its cold code.
 *
 *   npm run build && npx tsx bench/recycling.ts      # ROUNDS=4 SECONDS=15 by default
 */
import { loadavg } from 'node:os';
import { fixedAmount, throughput, type Target } from './lib/load';
import { startService, type Server } from './lib/servers';

const ROUNDS = Number(process.env.ROUNDS ?? 4);
const SECONDS = Number(process.env.SECONDS ?? 15);
const CONNECTIONS = 8;
const MAX_TASKS = 50;
/** About 45 ms of CPU: the heavy task of the main bench. */
const HEAVY = { iterations: 2_000_000, payloadSize: 10_000 };

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

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

const start = (maxTasks: number) =>
  startService(`max-tasks-${maxTasks}`, {
    CLUSTER_WORKERS: '2',
    POOL_THREADS: '1',
    WORKER_MAX_TASKS: String(maxTasks),
    LOG_LEVEL: 'warn',
  });

const targetOf = (server: Server): Target => ({
  url: server.url,
  path: '/api/tasks/compute',
  method: 'POST',
  body: JSON.stringify(HEAVY),
  contentType: 'application/json',
});

async function measure(server: Server): Promise<{ perSecond: number; recycled: number }> {
  const before = await recycled(server);
  const result = await throughput(targetOf(server), CONNECTIONS, SECONDS);
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${server.label}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }
  return { perSecond: result.perSecond, recycled: (await recycled(server)) - before };
}

async function main(): Promise<void> {
  console.log(`load average before: ${load()}`);
  const plain = await start(0);
  const recycling = await start(MAX_TASKS);
  try {
    await Promise.all(
      [plain, recycling].map((server) => fixedAmount(targetOf(server), CONNECTIONS, 100)),
    );
    let without = 0;
    let withRecycling = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      const [none, fifty] = await Promise.all([measure(plain), measure(recycling)]);
      without += none.perSecond;
      withRecycling += fifty.perSecond;
      console.log(
        `round ${round}: without recycling ${none.perSecond.toFixed(1)} req/s; ` +
          `WORKER_MAX_TASKS=${MAX_TASKS} ${fifty.perSecond.toFixed(1)} req/s ` +
          `(${fifty.recycled} threads recycled), ratio ${(fifty.perSecond / none.perSecond).toFixed(3)}`,
      );
    }
    console.log(
      `all rounds: ratio ${(withRecycling / without).toFixed(3)}; load average after: ${load()}`,
    );
  } finally {
    await Promise.all([plain.stop(), recycling.stop()]);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
