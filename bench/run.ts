/**
 * corepool's benchmark: the before/after proof and the performance targets.
 *
 *   npm run bench             # full run, about 20 minutes on 2 cores (the crowd grid ~9)
 *   npm run bench -- --quick  # 3–4 minutes, shorter and noisier
 *   npm run bench -- --hot-path [--quick] [--before=<checkout>]
 *                             # the light route and tiny tasks only (bare, lean, Nest
 *                             # minimal, corepool 1 × N), printed, no report written;
 *                             # each --before adds another checkout's build (its dist/) beside them;
 *                             # --variant=NAME=VALUE,… adds this build with those settings
 *                             # (repeatable: one configuration per --variant)
 *
 * Builds dist/ if it is stale, starts every configuration as a child process
 * on a free loopback port, drives it with autocannon from this process, and
 * writes a dated note, latest.md and latest.json into bench/results/. A full
 * run also refreshes the results table in docs/performance.md.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { basename, resolve } from 'node:path';
import { runCrowd } from './crowd';
import { buildIfNeeded } from './lib/build';
import {
  background,
  fixedAmount,
  probe,
  throughput,
  timedSequence,
  warmUp,
  type Target,
  type Throughput,
} from './lib/load';
import { parallelRate } from './lib/parallel-rate';
import { variantsOf } from './lib/variants';
import { pinnedLoadUnavailable, pinnedThroughput, pinProcess } from './lib/pinned-load';
import { writeReport, type BenchReport, type ConfigResult } from './lib/report';
import { ROOT, startBaseline, startService, type Server } from './lib/servers';
import { summarize } from './lib/stats';

const quick = process.argv.includes('--quick');
/** Only the side-by-side light and tiny workloads, for work on the hot path. */
const hotPath = process.argv.includes('--hot-path');
/** Other checkouts (each with its own dist/ and node_modules) measured beside this one's build. */
const checkouts = process.argv
  .filter((arg) => arg.startsWith('--before='))
  .map((arg) => arg.slice('--before='.length));
/** Extra configurations of this build (`--variant=NAME=VALUE,…`), measured beside the others. */
const variants = variantsOf(process.argv);

/** Every duration and count of the run; `--quick` shrinks them. */
const PLAN = quick
  ? {
      singleThreadSeconds: 2,
      firstWarmSeconds: 1,
      rounds: 3,
      roundWarmSeconds: 0.25,
      roundSeconds: 1,
      probeIdleSeconds: 2,
      probeBusySeconds: 2,
      heavyWarmSeconds: 1,
      heavySeconds: 3,
      hashRequests: 3,
      rssWarmRequests: 1_000,
      rssRequests: 5_000,
    }
  : {
      singleThreadSeconds: 5,
      firstWarmSeconds: 5,
      rounds: 4,
      roundWarmSeconds: 0.5,
      roundSeconds: 3,
      probeIdleSeconds: 10,
      probeBusySeconds: 10,
      heavyWarmSeconds: 2,
      heavySeconds: 10,
      hashRequests: 15,
      rssWarmRequests: 10_000,
      rssRequests: 100_000,
    };

const CORES = availableParallelism();
/** The heavy task: tens of milliseconds of pure CPU on one core. */
const HEAVY_INPUT = { iterations: 2_000_000, payloadSize: 10_000 };
/** The tiny task: a few microseconds, so the HTTP + pool path is all that is measured. */
const TINY_INPUT = { iterations: 100, payloadSize: 100 };
const PROBE_RATE = 50;
const LIGHT_CONNECTIONS = 32;
// Below the default queue limit of one process (128 per thread), so no request is refused.
const TINY_CONNECTIONS = 16;
const HASH_BYTES = 32 * 1024 * 1024;
const COMPUTE_TASK_FILE = resolve(ROOT, 'dist', 'tasks', 'compute.task.js');

type Workload = 'light' | 'isolation' | 'heavy' | 'tiny' | 'hash' | 'hashClone' | 'rss';

interface Configuration {
  readonly key: string;
  readonly label: string;
  readonly processes: number;
  /** Worker threads in all processes together (0: inline). */
  readonly threads: number;
  readonly workloads: readonly Workload[];
  /** Request headers its light and tiny loads send (`--variant=header:NAME=VALUE`). */
  readonly headers?: Readonly<Record<string, string>>;
  start(): Promise<Server>;
}

const service = (env: Record<string, string>) => () => startService('service', env);
const HOT_PATH_KEYS = ['bare', 'lean', 'leanBatched', 'nest', 'pool', 'variant'];
const ALL_SERVICE: readonly Workload[] = ['light', 'isolation', 'heavy', 'tiny', 'hash', 'rss'];

const EVERY_CONFIGURATION: readonly Configuration[] = [
  {
    key: 'bare',
    label: 'bare Fastify (hello route)',
    processes: 1,
    threads: 0,
    workloads: ['light'],
    start: () => startBaseline('bare Fastify', 'bare-fastify.ts'),
  },
  {
    key: 'lean',
    label: `lean: Fastify + Piscina, ${CORES} threads`,
    processes: 1,
    threads: CORES,
    workloads: ['light', 'isolation', 'heavy', 'tiny', 'hash', 'hashClone'],
    start: () =>
      startBaseline('lean', 'lean-server.ts', {
        POOL_THREADS: String(CORES),
        // corepool's default; docs/adr/0003-thread-priority-after-load.md has the measurements.
        WORKER_NICE_INCREMENT: '19',
      }),
  },
  {
    key: 'leanBatched',
    label: `lean with batches of up to 8 tasks per thread, ${CORES} threads`,
    processes: 1,
    threads: CORES,
    workloads: ['tiny'],
    start: () =>
      startBaseline('lean batched', 'lean-batched.ts', {
        POOL_THREADS: String(CORES),
        WORKER_NICE_INCREMENT: '19',
        BATCH_MAX_TASKS: '8',
      }),
  },
  {
    key: 'nest',
    label: `Nest minimal: Nest on Fastify + Piscina, ${CORES} threads`,
    processes: 1,
    threads: CORES,
    workloads: ['light', 'tiny'],
    start: () =>
      startBaseline('Nest minimal', 'nest-minimal.ts', {
        POOL_THREADS: String(CORES),
        WORKER_NICE_INCREMENT: '19',
      }),
  },
  {
    key: 'inline',
    label: 'corepool, POOL_THREADS=0 (inline: before)',
    processes: 1,
    threads: 0,
    workloads: ['light', 'isolation', 'heavy', 'tiny'],
    start: service({ CLUSTER_PROCESSES: '1', POOL_THREADS: '0' }),
  },
  {
    key: 'pool',
    label: `corepool, 1 process × ${CORES} threads`,
    processes: 1,
    threads: CORES,
    workloads: ALL_SERVICE,
    start: service({ CLUSTER_PROCESSES: '1' }),
  },
  {
    key: 'cluster',
    label: `corepool, ${CORES} processes × 1 thread (default)`,
    processes: CORES,
    threads: CORES,
    workloads: ALL_SERVICE,
    start: service({ CLUSTER_PROCESSES: String(CORES) }),
  },
  {
    key: 'poolNice0',
    label: `corepool, 1 process × ${CORES} threads, WORKER_NICE_INCREMENT=0`,
    processes: 1,
    threads: CORES,
    workloads: ['isolation'],
    start: service({ CLUSTER_PROCESSES: '1', WORKER_NICE_INCREMENT: '0' }),
  },
  ...checkouts.map((checkout): Configuration => ({
    key: basename(checkout),
    label: `${basename(checkout)} (another checkout), 1 process × ${CORES} threads`,
    processes: 1,
    threads: CORES,
    workloads: ['light', 'tiny'],
    start: () => startService(basename(checkout), { CLUSTER_PROCESSES: '1' }, resolve(checkout)),
  })),
  ...variants.map(({ key, env, headers }): Configuration => ({
    key,
    label: `corepool, 1 process × ${CORES} threads, ${[
      ...Object.entries(env),
      ...Object.entries(headers).map(([name, value]) => [`header:${name}`, value]),
    ]
      .map((pair) => pair.join('='))
      .join(' ')}`,
    headers,
    processes: 1,
    threads: CORES,
    workloads: ['light', 'tiny'],
    start: service({ CLUSTER_PROCESSES: '1', ...env }),
  })),
];
/** Configurations only the hot-path run measures: the full run's report has no place for them. */
const HOT_PATH_ONLY = ['leanBatched', ...variants.map(({ key }) => key)];
const CONFIGURATIONS = EVERY_CONFIGURATION.filter((config) =>
  hotPath
    ? HOT_PATH_KEYS.includes(config.key) ||
      HOT_PATH_ONLY.includes(config.key) ||
      checkouts.some((c) => basename(c) === config.key)
    : !HOT_PATH_ONLY.includes(config.key),
);

const json = (path: string, body: object): Target => ({
  url: '',
  path,
  method: 'POST',
  body: JSON.stringify(body),
  contentType: 'application/json',
});
const at = (server: Server, target: Target): Target => ({ ...target, url: server.url });

const started = performance.now();
function log(line: string): void {
  const elapsed = Math.round((performance.now() - started) / 1000);
  const stamp = `${String(Math.floor(elapsed / 60)).padStart(2, '0')}:${String(elapsed % 60).padStart(2, '0')}`;
  process.stderr.write(`[${stamp}] ${line}\n`);
}

/**
 * The heavy task on `threads` plain worker threads at once, nothing else running.
 * One thread gives the single-thread rate, measured the same way as all cores.
 */
async function rawRate(threads: number): Promise<{ perSecond: number; msPerTask: number }> {
  const { perSecond } = await parallelRate(
    COMPUTE_TASK_FILE,
    HEAVY_INPUT,
    threads,
    PLAN.singleThreadSeconds,
  );
  return { perSecond, msPerTask: (1000 * threads) / perSecond };
}

/** Measured side by side in rounds (`sideBySide`), not one configuration at a time. */
const SIDE_BY_SIDE = ['light', 'tiny'] as const;
const isSideBySide = (workload: Workload) =>
  (SIDE_BY_SIDE as readonly Workload[]).includes(workload);

const newResult = (config: Configuration): ConfigResult => ({
  key: config.key,
  label: config.label,
  processes: config.processes,
  threads: config.threads,
});

/**
 * The light route and tiny tasks, where the ratios to the baselines are the
 * point: every configuration that has them runs at once (an idle server costs
 * nothing), and each round measures them one after another, so drift on a
 * shared machine weighs on all of them alike. The median round counts.
 */
async function sideBySide(results: ReadonlyMap<string, ConfigResult>): Promise<void> {
  const configs = CONFIGURATIONS.filter((c) => c.workloads.some(isSideBySide));
  const servers = new Map<string, Server>();
  try {
    for (const config of configs) {
      log(`${config.label}: starting`);
      try {
        servers.set(config.key, await config.start());
      } catch (error) {
        failed(results.get(config.key), error);
      }
    }
    for (const workload of SIDE_BY_SIDE) {
      const connections = workload === 'light' ? LIGHT_CONNECTIONS : TINY_CONNECTIONS;
      log(
        workload === 'light'
          ? `light route: GET /health/live, ${connections} connections`
          : `tiny tasks: compute ${TINY_INPUT.iterations} iterations, ${connections} connections`,
      );
      // A Nest application keeps getting faster for seconds (V8 optimizes its deep
      // call chains late): each configuration warms up before the first round.
      const lastRate = new Map<string, number>();
      for (const config of configs) {
        const server = servers.get(config.key);
        if (server === undefined || !config.workloads.includes(workload)) continue;
        const warm = await throughput(
          targetOf(workload, server, config.headers),
          connections,
          PLAN.firstWarmSeconds,
        );
        lastRate.set(config.key, warm.perSecond);
      }
      const rounds: Rounds = new Map();
      for (let round = 1; round <= PLAN.rounds; round++) {
        for (const config of configs) {
          const server = servers.get(config.key);
          if (server === undefined || !config.workloads.includes(workload)) continue;
          const target = targetOf(workload, server, config.headers);
          // Opens the connections, so the counted seconds are all requests, and
          // ends with all of them answered (see warmUp).
          await warmUp(target, connections, PLAN.roundWarmSeconds, lastRate.get(config.key) ?? 0);
          const cpuBefore = server.mainThreadCpuMicros();
          const counted = await throughput(target, connections, PLAN.roundSeconds);
          const answered = counted.ok + counted.non2xx;
          const measured = {
            ...counted,
            mainThreadCpuMicros: (server.mainThreadCpuMicros() - cpuBefore) / Math.max(1, answered),
          };
          lastRate.set(config.key, measured.perSecond);
          rounds.set(config.key, [...(rounds.get(config.key) ?? []), measured]);
        }
        logRound(round, rounds);
      }
      keepMedians(rounds, results, workload);
    }
    await pinnedLight(configs, servers, results);
  } finally {
    for (const server of servers.values()) await server.stop();
  }
}

/**
 * The light route once more, server-bound (`lib/pinned-load.ts`): each
 * one-process server alone on the last core, wrk on the first, in rounds like
 * the others. Last, so that pinning touches nothing else that is measured.
 */
async function pinnedLight(
  configs: readonly Configuration[],
  servers: ReadonlyMap<string, Server>,
  results: ReadonlyMap<string, ConfigResult>,
): Promise<void> {
  const unavailable = pinnedLoadUnavailable(CORES);
  if (unavailable !== undefined) {
    log(`light route, server-bound: skipped, ${unavailable}`);
    return;
  }
  const pinned = configs.filter((c) => c.processes === 1 && c.workloads.includes('light'));
  log(
    `light route, server-bound: each server on core ${CORES - 1}, wrk on core 0, ${LIGHT_CONNECTIONS} connections`,
  );
  const url = (server: Server) => `${server.url}/health/live`;
  const rounds: Rounds = new Map();
  for (let round = 1; round <= PLAN.rounds; round++) {
    for (const config of pinned) {
      const server = servers.get(config.key);
      if (server === undefined) continue;
      pinProcess(server.pid, String(CORES - 1));
      try {
        await pinnedThroughput(url(server), LIGHT_CONNECTIONS, Math.max(1, PLAN.roundWarmSeconds));
        const cpuBefore = server.mainThreadCpuMicros();
        const counted = await pinnedThroughput(url(server), LIGHT_CONNECTIONS, PLAN.roundSeconds);
        const answered = counted.ok + counted.non2xx;
        rounds.set(config.key, [
          ...(rounds.get(config.key) ?? []),
          {
            ...counted,
            mainThreadCpuMicros: (server.mainThreadCpuMicros() - cpuBefore) / Math.max(1, answered),
          },
        ]);
      } finally {
        pinProcess(server.pid, `0-${CORES - 1}`);
      }
    }
    logRound(round, rounds);
  }
  keepMedians(rounds, results, 'lightPinned');
}

/** Each configuration's rounds of one workload: the rate and main-thread µs per request. */
type Rounds = Map<string, Array<Throughput & { mainThreadCpuMicros: number }>>;

function logRound(round: number, rounds: Rounds): void {
  log(
    `  round ${round}/${PLAN.rounds}: ` +
      [...rounds]
        .map(([key, all]) => `${key} ${Math.round(all.at(-1)?.perSecond ?? 0)}`)
        .join(', ') +
      ` per s`,
  );
}

/** The median round of each configuration becomes its result for `workload`. */
function keepMedians(
  rounds: Rounds,
  results: ReadonlyMap<string, ConfigResult>,
  workload: 'light' | 'lightPinned' | 'tiny',
): void {
  for (const [key, all] of rounds) {
    const result = results.get(key);
    if (result === undefined) continue;
    const { mainThreadCpuMicros, ...median } = medianRound(all);
    result[workload] = median;
    result.mainThreadCpuMicros = { ...result.mainThreadCpuMicros, [workload]: mainThreadCpuMicros };
  }
}

const targetOf = (
  workload: (typeof SIDE_BY_SIDE)[number],
  server: Server,
  headers: Readonly<Record<string, string>> = {},
): Target =>
  workload === 'light'
    ? { url: server.url, path: '/health/live', headers }
    : { ...at(server, json('/api/tasks/compute', TINY_INPUT)), headers };

/** The round with the median rate (of an even number, the lower of the middle two). */
function medianRound<Round extends Throughput>(rounds: readonly Round[]): Round {
  const sorted = [...rounds].sort((a, b) => a.perSecond - b.perSecond);
  return sorted[Math.floor((sorted.length - 1) / 2)] as Round;
}

/** One configuration failing must not cost the others' numbers; the report says why. */
function failed(result: ConfigResult | undefined, error: unknown): void {
  const reason = error instanceof Error ? error.message : String(error);
  log(`  ✗ ${reason}`);
  if (result !== undefined) result.error = reason.split('\n')[0];
}

/** Every other workload, one configuration at a time: each needs the machine to itself. */
async function measure(
  config: Configuration,
  result: ConfigResult,
  hashBody: Buffer,
  singleThreadPerSecond: number,
): Promise<void> {
  if (config.workloads.every(isSideBySide)) return;
  log(`${config.label}: starting`);
  let server: Server | undefined;
  try {
    server = await config.start();
    const heavy = at(server, json('/api/tasks/compute', HEAVY_INPUT));
    // Enough heavy requests in flight that no thread (or inline event loop) ever waits for one.
    const busyConnections = Math.max(1, config.threads, config.processes) * 2;

    if (config.workloads.includes('isolation')) {
      log(`  isolation: probe at ${PROBE_RATE}/s idle (${PLAN.probeIdleSeconds} s)`);
      const idle = await probe(server.url, '/health/live', PROBE_RATE, PLAN.probeIdleSeconds);
      log(
        `  → idle p99 ${idle.p99.toFixed(2)} ms; now with every thread busy (${PLAN.probeBusySeconds} s)`,
      );
      const stop = background(heavy, busyConnections);
      await new Promise((done) => setTimeout(done, 1000));
      const busy = await probe(server.url, '/health/live', PROBE_RATE, PLAN.probeBusySeconds);
      const load = await stop();
      result.isolation = { idle, busy, busyLoad: load };
      log(`  → busy p99 ${busy.p99.toFixed(2)} ms, max ${busy.max.toFixed(2)} ms`);
    }
    if (config.workloads.includes('heavy')) {
      log(
        `  heavy throughput: compute ${HEAVY_INPUT.iterations} iterations, ${busyConnections} connections, ${PLAN.heavySeconds} s`,
      );
      // At the ideal rate for its threads; it ends with every task answered (see warmUp).
      const idealPerSecond = singleThreadPerSecond * Math.max(1, config.threads);
      await warmUp(heavy, busyConnections, PLAN.heavyWarmSeconds, idealPerSecond);
      result.heavy = await throughput(heavy, busyConnections, PLAN.heavySeconds);
      log(`  → ${result.heavy.perSecond.toFixed(1)} tasks/s`);
    }
    if (config.workloads.includes('hash') || config.workloads.includes('hashClone')) {
      const variants: ['transfer' | 'clone', string][] = [
        ['transfer', '/api/tasks/hash?algorithm=sha256'],
      ];
      if (config.workloads.includes('hashClone')) {
        variants.push(['clone', '/api/tasks/hash?algorithm=sha256&clone=1']);
      }
      log(
        `  hash 32 MiB (${variants.map(([variant]) => variant).join(' and ')}): ${PLAN.hashRequests} requests each, one at a time`,
      );
      const { url } = server;
      const target = (path: string): Target => ({
        url,
        path,
        method: 'POST',
        body: hashBody,
        contentType: 'application/octet-stream',
      });
      for (const [, path] of variants) await timedSequence(target(path), 2);
      // Interleaved, one request of each variant in turn: drift on a shared machine
      // (other load, memory settling) then weighs on both alike.
      const times: Record<'transfer' | 'clone', number[]> = { transfer: [], clone: [] };
      for (let i = 0; i < PLAN.hashRequests; i++) {
        for (const [variant, path] of variants) {
          times[variant].push(...(await timedSequence(target(path), 1)));
        }
      }
      result.hash = {};
      for (const [variant] of variants) result.hash[variant] = summarize(times[variant]);
      log(
        `  → median ${variants.map(([variant]) => `${variant} ${result.hash?.[variant]?.p50.toFixed(1)} ms`).join(', ')}`,
      );
      if (config.workloads.includes('hashClone')) {
        // The handoff alone: from posting the body to the thread starting on it.
        const handoffs = (await (await fetch(`${server.url}/bench/handoffs`)).json()) as Record<
          'transfer' | 'clone',
          number[]
        >;
        result.hashHandoff = {
          transfer: summarize(handoffs.transfer),
          clone: summarize(handoffs.clone),
        };
      }
    }
    if (config.workloads.includes('rss')) {
      // The light route: 100,000 tiny tasks would take minutes on a busy 2-core machine.
      const light = { url: server.url, path: '/health/live' };
      log(
        `  memory: ${PLAN.rssWarmRequests} light requests to warm up, then ${PLAN.rssRequests} more`,
      );
      await fixedAmount(light, LIGHT_CONNECTIONS, PLAN.rssWarmRequests);
      const beforeMiB = server.rssMiB();
      const load = await fixedAmount(light, LIGHT_CONNECTIONS, PLAN.rssRequests);
      const afterMiB = server.rssMiB();
      result.rss = { beforeMiB, afterMiB, requests: load.ok, failed: load.non2xx + load.errors };
      log(`  → RSS ${beforeMiB.toFixed(1)} → ${afterMiB.toFixed(1)} MiB`);
    }
  } catch (error) {
    failed(result, error);
  } finally {
    await server?.stop();
  }
}

async function main(): Promise<void> {
  buildIfNeeded(log);
  const loadBefore = loadavg()[0] ?? NaN;
  log(`${quick ? 'quick' : 'full'} run on ${CORES} cores; load average ${loadBefore.toFixed(2)}`);
  const results = new Map(CONFIGURATIONS.map((config) => [config.key, newResult(config)]));
  if (hotPath) {
    await sideBySide(results);
    printHotPath([...results.values()], loadBefore);
    return;
  }
  log(`single-thread rate of the heavy task (${PLAN.singleThreadSeconds} s, one plain thread)`);
  const single = await rawRate(1);
  log(`  → ${single.perSecond.toFixed(1)} tasks/s (${single.msPerTask.toFixed(1)} ms each)`);
  log(
    `the same on all ${CORES} cores at once (${PLAN.singleThreadSeconds} s, ${CORES} plain threads)`,
  );
  const parallel = await rawRate(CORES);
  log(`  → ${parallel.perSecond.toFixed(1)} tasks/s`);

  const hashBody = randomBytes(HASH_BYTES);
  await sideBySide(results);
  for (const config of CONFIGURATIONS) {
    await measure(config, results.get(config.key) as ConfigResult, hashBody, single.perSecond);
  }
  const configs = [...results.values()];
  // Many patient clients at once, beside the lean peer: the whole grid in a full run.
  log('crowd: patient keep-alive clients, corepool beside the lean peer');
  const crowd = await runCrowd(quick ? { tasks: ['tiny'], clients: [1_000] } : {});

  const report: BenchReport = {
    date: new Date().toISOString(),
    mode: quick ? 'quick' : 'full',
    command: quick ? 'npm run bench -- --quick' : 'npm run bench',
    cores: CORES,
    cpu: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    loadAverage: { before: loadBefore, after: loadavg()[0] ?? NaN },
    durationSeconds: (performance.now() - started) / 1000,
    settings: {
      heavyInput: HEAVY_INPUT,
      tinyInput: TINY_INPUT,
      probeRatePerSecond: PROBE_RATE,
      lightConnections: LIGHT_CONNECTIONS,
      sideBySideRounds: PLAN.rounds,
      tinyConnections: TINY_CONNECTIONS,
      hashBytes: HASH_BYTES,
      plan: PLAN,
    },
    singleThread: single,
    allCores: { perSecond: parallel.perSecond },
    configs,
    crowd,
  };
  const written = await writeReport(report, { updatePerformanceDoc: !quick });
  log(`done in ${Math.round(report.durationSeconds)} s; wrote ${written.join(', ')}`);
}

/** The hot-path numbers and their ratios to the baselines, on stdout. */
function printHotPath(configs: readonly ConfigResult[], loadBefore: number): void {
  const of = (key: string) => configs.find((c) => c.key === key);
  const lean = of('lean');
  const bare = of('bare');
  const fixed = (value: number | undefined, digits = 0) =>
    value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits);
  const lines = [
    `load average ${loadBefore.toFixed(2)} before, ${(loadavg()[0] ?? NaN).toFixed(2)} after`,
    'configuration | light req/s (÷ bare) | light server-bound req/s (÷ bare) | tiny req/s (÷ lean) | main-thread µs/tiny (÷ lean) | µs/light | µs/light server-bound',
  ];
  for (const c of configs) {
    const cpu = c.mainThreadCpuMicros;
    lines.push(
      `${c.key} | ${fixed(c.light?.perSecond)} (${fixed((c.light?.perSecond ?? NaN) / (bare?.light?.perSecond ?? NaN), 2)})` +
        ` | ${fixed(c.lightPinned?.perSecond)} (${fixed((c.lightPinned?.perSecond ?? NaN) / (bare?.lightPinned?.perSecond ?? NaN), 2)})` +
        ` | ${fixed(c.tiny?.perSecond)} (${fixed((c.tiny?.perSecond ?? NaN) / (lean?.tiny?.perSecond ?? NaN), 2)})` +
        ` | ${fixed(cpu?.tiny)} (${fixed((cpu?.tiny ?? NaN) / (lean?.mainThreadCpuMicros?.tiny ?? NaN), 2)})` +
        ` | ${fixed(cpu?.light)} | ${fixed(cpu?.lightPinned)}`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
