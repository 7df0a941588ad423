/**
 * Jobs bench (docs/jobs.md, ADR 0012): the SQLite backend (the default) beside
 * BullMQ on a local Redis, each on the default 2-process cluster.
 *
 *   npm run build && npm run bench:jobs
 *   npm run bench:jobs -- --jobs 1000 --seconds 5     # a shorter run
 *
 * 1. Throughput: `--jobs` tiny jobs (`thread-id`, a no-op on a thread) submitted
 *    over 32 connections; jobs per second from the first submission until the
 *    store counts them all succeeded.
 * 2. Submit latency at 500 submissions/s (open loop, `--seconds`): p50, p99, max,
 *    from a light generator in a process of its own (`bench/lib/open-loop-client.ts`).
 * 0. The SQLite store alone, in this process, no HTTP: the time each call holds
 *    the event loop (insert, claim, finish), p50 / p99 / max in microseconds.
 * 3. Event-loop blocking at 1,000 submissions/s: the largest event-loop lag of
 *    any service process over the run (prom-client's `nodejs_eventloop_lag_*`,
 *    reset by the scrape before the run).
 *
 * The load generators share the machine: numbers from a busy machine say so,
 * and the note gives the CPU pressure (Linux PSI) over the timed runs.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { REDIS_URL, uniquePrefix } from '../test/support/jobs-client';
import { startService, type ServiceProcess } from '../test/support/service-process';
import { SqliteJobStore } from '../src/jobs/sqlite/sqlite-job-store';
import { openLoop } from './lib/open-loop';
import { startBaseline, type Server } from './lib/servers';
import { noteFileName, REPORT_PATHS } from './lib/report';
import { fmt, markdownTable, ratio, summarize, type LatencySummary } from './lib/stats';
import { TINY_ENDING, TINY_PAYLOAD } from './lib/tiny-job';

const { values: args } = parseArgs({
  options: {
    jobs: { type: 'string', default: '3000' },
    seconds: { type: 'string', default: '10' },
    /** Default: a note dated like the main bench's, `bench/results/2026-12-02-1339-jobs.md`. */
    out: { type: 'string' },
  },
});
const JOBS = Number(args.jobs);
const SECONDS = Number(args.seconds);
const CONNECTIONS = 32;
/** Requests per second to the bare Fastify process during the timed runs: the machine's floor. */
const FLOOR_RATE = 200;
const BODY = JSON.stringify({ task: 'thread-id', input: {} });

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

type RateSummary = Awaited<ReturnType<typeof atRate>>;

interface BackendResult {
  readonly label: string;
  readonly jobsPerSecond: number;
  readonly refusedInThroughput: number;
  readonly at500: RateSummary;
  readonly at1000: RateSummary;
  readonly lagMaxMs: number;
  readonly lagP99Ms: number;
}

/** One submission; a connection that fails counts as status 0 (refused), not as the end of the run. */
async function submit(url: string): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  try {
    const response = await fetch(`${url}/api/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: BODY,
    });
    await response.arrayBuffer();
    return { ms: performance.now() - started, status: response.status };
  } catch {
    return { ms: performance.now() - started, status: 0 };
  }
}

async function metrics(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

function values(text: string, name: string, label?: string): number[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(name) && (label === undefined || line.includes(label)))
    .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)));
}

async function succeeded(url: string): Promise<number> {
  return Math.max(
    0,
    ...values(await metrics(url), 'compute_jobs_queue_depth{', 'state="succeeded"'),
  );
}

/** Closed loop over CONNECTIONS, then waits until the store counts every job succeeded. */
async function throughput(
  service: ServiceProcess,
): Promise<{ perSecond: number; refused: number }> {
  const before = await succeeded(service.url);
  let next = 0;
  let refused = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < JOBS) {
        next += 1;
        if ((await submit(service.url)).status !== 202) refused += 1;
      }
    }),
  );
  const accepted = JOBS - refused;
  while ((await succeeded(service.url)) - before < accepted) {
    if (performance.now() - started > 300_000) throw new Error('jobs did not finish in 5 min');
    await sleep(20);
  }
  return { perSecond: accepted / ((performance.now() - started) / 1000), refused };
}

/**
 * Open loop: one submission every 1000/rate ms, whatever the answers take,
 * from a light generator in a process of its own (ADR 0024): `fetch` from
 * this process put its own event loop and GC into the tail (p99 1.3-4.3x
 * the light generator's against the same service). Latency from the
 * request's write to its full answer; `fromDueP99` also counts the time a
 * request waited for its slot in the generator.
 */
async function atRate(service: ServiceProcess, rate: number, floor: Server) {
  const pressureBefore = cpuPressureMicros();
  const [result, probe] = await Promise.all([
    openLoop({
      port: service.port,
      method: 'POST',
      path: '/api/jobs',
      body: BODY,
      rate,
      seconds: SECONDS,
      expect: 202,
      delayMs: 300,
    }),
    // The machine's floor in the same seconds: a bare Fastify process, probed lightly.
    openLoop({
      port: Number(new URL(floor.url).port),
      method: 'GET',
      path: '/health/live',
      rate: FLOOR_RATE,
      seconds: SECONDS,
      expect: 200,
      connections: 16,
      delayMs: 300,
    }),
  ]);
  const [p50 = NaN, , p99 = NaN, , max = NaN] = result.fromWrite;
  return {
    samples: result.sent,
    p50,
    p99,
    max,
    fromDueP99: result.fromDue[2] ?? NaN,
    floorP99: probe.fromWrite[2] ?? NaN,
    pressure: (cpuPressureMicros() - pressureBefore) / 1e4 / SECONDS,
    refused: result.failed,
  };
}

/** Microseconds so far that some runnable task waited for a core (Linux PSI), or NaN. */
function cpuPressureMicros(): number {
  try {
    return Number(/^some .*total=(\d+)/m.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1]);
  } catch {
    return NaN;
  }
}

async function bench(
  label: string,
  env: Record<string, string>,
  floor: Server,
): Promise<BackendResult> {
  const service = await startService(
    { CLUSTER_PROCESSES: '2', LOG_LEVEL: 'warn', ...env },
    { discardOutputAfterReady: true },
  );
  try {
    for (let i = 0; i < 200; i++) await submit(service.url); // warm-up
    const { perSecond, refused } = await throughput(service);
    const at500 = await atRate(service, 500, floor);
    await sleep(2000);
    await metrics(service.url); // resets the event-loop histograms
    const at1000 = await atRate(service, 1000, floor);
    const text = await metrics(service.url);
    const lagMaxMs = Math.max(...values(text, 'nodejs_eventloop_lag_max_seconds')) * 1000;
    const lagP99Ms = Math.max(...values(text, 'nodejs_eventloop_lag_p99_seconds')) * 1000;
    return {
      label,
      jobsPerSecond: perSecond,
      refusedInThroughput: refused,
      at500,
      at1000,
      lagMaxMs,
      lagP99Ms,
    };
  } finally {
    await service.stop();
  }
}

/** Each store call's time on the event loop, one process, `count` jobs through insert, claim and finish. */
function storeCalls(count: number): Record<'insert' | 'claim' | 'finish', LatencySummary> {
  const store = new SqliteJobStore({
    path: join(mkdtempSync(join(tmpdir(), 'corepool-bench-')), 'jobs.sqlite'),
    maxStored: 10_000,
    maxStoredBytes: 1_073_741_824,
    resultTtlSeconds: 3600,
    attempts: 3,
    backoffMs: 1000,
  });
  const times = { insert: [] as number[], claim: [] as number[], finish: [] as number[] };
  const timed = <T>(into: number[], call: () => T): T => {
    const started = performance.now();
    const result = call();
    into.push((performance.now() - started) * 1000);
    return result;
  };
  for (let i = 0; i < count; i++) {
    timed(times.insert, () => store.insert(TINY_PAYLOAD, 'bench', undefined));
    const [job] = timed(times.claim, () => store.claim('bench', 1, 30_000));
    if (job !== undefined) {
      timed(times.finish, () => store.finish(job.id, 'bench', TINY_ENDING));
    }
  }
  store.close();
  return {
    insert: summarize(times.insert),
    claim: summarize(times.claim),
    finish: summarize(times.finish),
  };
}

async function main(): Promise<void> {
  const calls = storeCalls(JOBS);
  const floor = await startBaseline('bare Fastify', 'bare-fastify.ts');
  let results: BackendResult[];
  try {
    results = [
      await bench('SQLite (default)', {}, floor),
      await bench('BullMQ, local Redis', { REDIS_URL, JOBS_QUEUE_PREFIX: uniquePrefix() }, floor),
    ];
  } finally {
    await floor.stop();
  }
  const [sqlite, bull] = results as [BackendResult, BackendResult];
  const rows = results.map((r) => [
    r.label,
    fmt(r.jobsPerSecond),
    `${fmt(r.at500.p50, 2)} / ${fmt(r.at500.p99, 2)} / ${fmt(r.at500.max, 1)}`,
    `${fmt(r.at500.floorP99, 2)} · ${fmt(r.at500.pressure, 0)} %`,
    `${fmt(r.at1000.p50, 2)} / ${fmt(r.at1000.p99, 2)} / ${fmt(r.at1000.max, 1)}`,
    `${fmt(r.lagP99Ms, 1)} / ${fmt(r.lagMaxMs, 1)}`,
    String(r.refusedInThroughput + r.at500.refused + r.at1000.refused),
  ]);
  const throughputRatio = ratio(sqlite.jobsPerSecond, bull.jobsPerSecond);
  const date = new Date().toISOString();
  const note = `# Jobs: SQLite (default) beside BullMQ — ${date.slice(0, 16)}Z

\`npm run bench:jobs -- --jobs ${JOBS} --seconds ${SECONDS}\`, Node ${process.version},
${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown'}), load average at the end
${loadavg()
  .map((load) => load.toFixed(2))
  .join(' ')}. Each backend on the default 2-process
cluster; the load generators run on the same machine, each in a process of its own (ADR 0024).
**On a shared machine absolute numbers are noisy (see the load average); the ratio of the two
backends, measured one after the other, is what to read**, and beside each 500/s run the
machine's own floor in the same seconds: a bare Fastify process probed at ${FLOOR_RATE}/s (its
p99), and the CPU pressure (Linux PSI \`some\`: the share of time some runnable task waited for a
core).

${markdownTable(
  [
    'backend',
    'tiny jobs/s',
    'submit ms at 500/s (p50 / p99 / max)',
    'same seconds: bare Fastify p99 ms · CPU pressure',
    'submit ms at 1,000/s (p50 / p99 / max)',
    'event-loop lag ms at 1,000/s (p99 / max)',
    'refused',
  ],
  rows,
)}

SQLite store calls alone (one process, no HTTP, ${JOBS} jobs), µs on the event loop:

${markdownTable(
  ['call', 'p50', 'p99', 'max'],
  Object.entries(calls).map(([call, summary]) => [
    call,
    fmt(summary.p50, 0),
    fmt(summary.p99, 0),
    fmt(summary.max, 0),
  ]),
)}

- Throughput, SQLite ÷ BullMQ: **${fmt(throughputRatio, 2)}×** (target ≥ 0.8×).
- p99 submit latency at 500/s on SQLite: **${fmt(sqlite.at500.p99, 2)} ms** (target ≤ 5 ms),
  counted from each request's write; from its due time (its wait for the generator too)
  ${fmt(sqlite.at500.fromDueP99, 2)} ms.
- Event-loop lag is the largest over the service's processes, over the 1,000/s run (p99 of the
  process's own histogram, and its max).
`;
  const out = args.out ?? join(REPORT_PATHS.resultsDir, noteFileName({ date, mode: 'jobs' }));
  writeFileSync(resolve(out), note);
  process.stdout.write(note);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
