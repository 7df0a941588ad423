/**
 * Where the submit tail goes (ADR 0024): variants of the service and
 * of the load generator side by side, alternating, each on the default
 * 2-process cluster with a fresh SQLite file.
 *
 *   npm run build && npx tsx bench/jobs-tail.ts \
 *     --variant 'fetch;gen=fetch' --variant 'raw;gen=raw' --rounds 3
 *
 * A variant is `label;key=value;…`: `gen=fetch` submits with `fetch` from this
 * process (as `bench/jobs.ts` did), `gen=raw` from a light generator in a
 * process of its own (`bench/lib/open-loop-client.ts`); `main=` and `argv=`
 * name the script and node's arguments (e.g. `main=bench/baselines/lean-server.ts;argv=--require tsx/cjs`);
 * `beside=R` measures it while the default service, in processes of its own,
 * is submitted to and runs R jobs a second, and `backlog=N` while it runs N jobs
 * submitted just before (no submissions of its own meanwhile; `--beside-body` and
 * `--beside-env` set its task and its pace); every other key is an environment variable
 * of the service (e.g. `NODE_OPTIONS=--max-semi-space-size=32`).
 *
 * Each service is first warmed up for `--warm` seconds at `--rate`. In the same
 * seconds as the submissions (`--rate`/s for `--seconds`):
 * - the machine's floor: a bare Fastify process (`bench/baselines/bare-fastify.ts`)
 *   probed at `--probe`/s by another light generator process;
 * - per service process, from /proc: the event-loop thread's CPU and the time it
 *   waited for a core (schedstat), the same for the SQLite writer thread, and summed over
 *   its other threads;
 * - per service process, from /metrics: scavenges (count and total ms) and the
 *   event-loop delay (p99, max).
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { launchProcess, type ServiceProcess } from '../test/support/service-process';
import { FAULT_TASKS } from '../test/support/test-config';
import { openLoop, type OpenLoopResult } from './lib/open-loop';
import { startBaseline } from './lib/servers';
import { fmt, median } from './lib/stats';
import { succeededJobs } from './lib/tiny-job';

const { values: args } = parseArgs({
  options: {
    variant: { type: 'string', multiple: true, default: ['raw;gen=raw'] },
    rounds: { type: 'string', default: '2' },
    rate: { type: 'string', default: '500' },
    seconds: { type: 'string', default: '10' },
    probe: { type: 'string', default: '200' },
    main: { type: 'string', default: 'dist/main.js' },
    quiet: { type: 'string', default: '100' },
    warm: { type: 'string', default: '10' },
    // The service of `beside=`/`backlog=`: what its jobs submit, and its settings (`K=V,K=V`).
    'beside-body': { type: 'string' },
    'beside-env': { type: 'string', default: '' },
  },
});
const BODY = JSON.stringify({ task: 'thread-id', input: {} });
const MISSING = '00000000-0000-4000-8000-000000000000';
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** The generator of bench/jobs.ts before ADR 0024: `fetch` from this process. */
async function fetchLoop(url: string, rate: number, seconds: number): Promise<OpenLoopResult> {
  const fromDue: number[] = [];
  const fromWrite: number[] = [];
  let failed = 0;
  const pending: Promise<void>[] = [];
  const started = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const sent = performance.now();
    pending.push(
      fetch(`${url}/api/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: BODY,
      })
        .then(async (response) => {
          await response.arrayBuffer();
          if (response.status !== 202) failed += 1;
        })
        .catch(() => void (failed += 1))
        .finally(() => {
          const now = performance.now();
          fromDue.push(now - due);
          fromWrite.push(now - sent);
        }),
    );
  }
  await Promise.all(pending);
  const pick = (values: number[]) => {
    const sorted = values.sort((a, b) => a - b);
    return [50, 90, 99, 99.9, 100].map(
      (p) => sorted[Math.min(sorted.length, Math.ceil((p / 100) * sorted.length)) - 1] ?? NaN,
    );
  };
  return {
    sent: rate * seconds,
    failed,
    fromDue: pick(fromDue),
    fromWrite: pick(fromWrite),
    ownLoop: [],
  };
}

/** As bench/jobs.ts's throughput run: `count` jobs over 32 connections, until all succeeded. */
async function burstOf(url: string, count: number): Promise<void> {
  const before = await succeededJobs(url);
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < count) {
        next += 1;
        const response = await fetch(`${url}/api/jobs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: BODY,
        });
        await response.arrayBuffer();
      }
    }),
  );
  const started = performance.now();
  while ((await succeededJobs(url)) - before < count && performance.now() - started < 120_000) {
    await sleep(20);
  }
}

/**
 * The default service in its own processes, running jobs beside what is
 * measured: the cores a submission path of its own would share with the
 * service's job runs (ADR 0038). With `rate`, it is warmed up and then kept at
 * that many submissions a second through the measured seconds; their HTTP work
 * is on the cores too, which makes this an upper bound. With `backlog`, it is
 * given that many jobs at once and runs them through the measured seconds,
 * with no submissions meanwhile.
 */
async function besideService({
  rate,
  backlog,
}: {
  rate: number;
  backlog: number;
}): Promise<ServiceProcess> {
  const settings = (args['beside-env'] ?? '').split(',').filter(Boolean);
  const beside = await launchProcess({
    label: 'beside',
    env: {
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      CLUSTER_PROCESSES: '2',
      TASK_MODULES: FAULT_TASKS,
      JOBS_MAX_STORED: String(Math.max(10_000, backlog * 2)),
      JOBS_SQLITE_PATH: join(mkdtempSync(join(tmpdir(), 'corepool-beside-')), 'jobs.sqlite'),
      ...Object.fromEntries(settings.map((setting) => setting.split('=') as [string, string])),
    },
    discardOutputAfterReady: true,
  });
  const body = args['beside-body'] ?? BODY;
  if (backlog > 0) {
    const burst = 2000;
    await submitAt(beside.port, burst, backlog / burst, { body, connections: 32 });
  } else {
    await submitAt(beside.port, rate, Number(args.warm), { body });
  }
  return beside;
}

function submitAt(
  port: number,
  rate: number,
  seconds: number,
  options: { body?: string; delayMs?: number; connections?: number } = {},
) {
  return openLoop({
    port,
    method: 'POST',
    path: '/api/jobs',
    body: options.body ?? BODY,
    expect: 202,
    rate,
    seconds,
    delayMs: options.delayMs,
    connections: options.connections,
  });
}

/** Microseconds so far that some runnable task waited for a core (Linux PSI), or NaN. */
function cpuPressureMicros(): number {
  try {
    return Number(/^some .*total=(\d+)/m.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1]);
  } catch {
    return NaN;
  }
}

/** PSI's `some avg10` for the CPU: the share of the last 10 s some runnable task waited for a core. */
function cpuPressureAvg10(): number {
  try {
    return Number(/^some avg10=([\d.]+)/m.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1]);
  } catch {
    return NaN;
  }
}

/**
 * Waits (at most 120 s) until the machine is quieter than `--quiet` percent of
 * CPU pressure: another engineer's bench shares these cores.
 */
async function untilQuiet(): Promise<number> {
  const limit = Number(args.quiet);
  const started = performance.now();
  while (cpuPressureAvg10() > limit && performance.now() - started < 120_000) await sleep(1000);
  return cpuPressureAvg10();
}

/** The SQLite writer's thread name (`writer-thread-client.ts`), as /proc shows it. */
const WRITER_THREAD = 'sqlite-writer';

function threadName(pid: number, tid: string): string {
  try {
    return readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** schedstat of a thread: ns on a core, ns waiting for one. */
function schedstat(pid: number, tid: number): [number, number] {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ');
    return [Number(run), Number(wait)];
  } catch {
    return [0, 0];
  }
}

/**
 * Per service process (the HTTP children of the primary), in ns: [loop run, loop wait, writer
 * thread run, writer wait, others run, others wait]. The writer (`sqlite-writer`) is apart: after
 * the loop it takes the most CPU per job (ADR 0039).
 */
function clusterSched(primary: number): Map<number, number[]> {
  const children = readFileSync(`/proc/${primary}/task/${primary}/children`, 'utf8')
    .trim()
    .split(' ')
    .filter(Boolean)
    .map(Number);
  const result = new Map<number, number[]>();
  for (const pid of children) {
    const totals = [0, 0, 0, 0, 0, 0];
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      const [run, wait] = schedstat(pid, Number(tid));
      const at = Number(tid) === pid ? 0 : threadName(pid, tid) === WRITER_THREAD ? 2 : 4;
      totals[at] = (totals[at] ?? 0) + run;
      totals[at + 1] = (totals[at + 1] ?? 0) + wait;
    }
    result.set(pid, totals);
  }
  return result;
}

/** Scavenges (count, total seconds) and event-loop p99 / max (s), per pid, from /metrics. */
async function processMetrics(url: string): Promise<Map<string, number[]>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const result = new Map<string, number[]>();
  const take = (name: string, index: number, filter = '') => {
    for (const line of text.split('\n')) {
      if (!line.startsWith(name) || !line.includes(filter)) continue;
      const pid = /pid="(\d+)"/.exec(line)?.[1];
      if (pid === undefined) continue;
      const values = result.get(pid) ?? [0, 0, 0, 0];
      values[index] = Number(line.slice(line.lastIndexOf(' ') + 1));
      result.set(pid, values);
    }
  };
  take('nodejs_gc_duration_seconds_count{', 0, 'kind="minor"');
  take('nodejs_gc_duration_seconds_sum{', 1, 'kind="minor"');
  take('nodejs_eventloop_lag_p99_seconds{', 2);
  take('nodejs_eventloop_lag_max_seconds{', 3);
  return result;
}

async function main(): Promise<void> {
  const variants = (args.variant ?? []).map((spec) => {
    const [label = spec, ...pairs] = spec.split(';');
    const env: Record<string, string> = {};
    for (const pair of pairs) {
      const at = pair.indexOf('=');
      env[pair.slice(0, at)] = pair.slice(at + 1);
    }
    const {
      gen = 'raw',
      get,
      control = '0',
      argv = '',
      main = args.main ?? 'dist/main.js',
      burst = '0',
      beside = '0',
      backlog = '0',
    } = env;
    delete env.burst;
    delete env.beside;
    delete env.backlog;
    delete env.main;
    delete env.gen;
    delete env.get;
    delete env.control;
    delete env.argv;
    const nodeArgs = argv.split(' ').filter(Boolean);
    return {
      label,
      gen,
      get: get === '1',
      control: Number(control),
      nodeArgs,
      main,
      burst: Number(burst),
      beside: Number(beside),
      backlog: Number(backlog),
      env,
    };
  });
  const rate = Number(args.rate);
  const seconds = Number(args.seconds);
  const probeRate = Number(args.probe);
  const floor = probeRate > 0 ? await startBaseline('bare', 'bare-fastify.ts') : undefined;
  const runs = new Map<string, { p99: number; floor: number; pressure: number }[]>();
  try {
    for (let round = 0; round < Number(args.rounds); round++) {
      for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
        const quietAt = await untilQuiet();
        const service = await launchProcess({
          args: [...variant.nodeArgs, resolve(variant.main)],
          env: {
            NODE_ENV: 'production',
            LOG_LEVEL: 'warn',
            CLUSTER_PROCESSES: '2',
            TASK_MODULES: FAULT_TASKS,
            JOBS_SQLITE_PATH: join(mkdtempSync(join(tmpdir(), 'corepool-tail-')), 'jobs.sqlite'),
            ...variant.env,
          },
          discardOutputAfterReady: true,
        });
        let beside: ServiceProcess | undefined;
        try {
          // Warm-up at the measured rate: after 200 submissions at 100/s, a 2-process cluster
          // still compiled through its first seconds at 500/s, and its p99 read 3-9 x its
          // steady state (ADR 0036).
          await submitAt(service.port, rate, Number(args.warm));
          if (variant.burst > 0) await burstOf(service.url, variant.burst);
          if (variant.beside > 0 || variant.backlog > 0) {
            beside = await besideService({ rate: variant.beside, backlog: variant.backlog });
          }
          await sleep(1000);
          await processMetrics(service.url); // resets the event-loop histograms
          const schedBefore = clusterSched(service.pid);
          const gcBefore = await processMetrics(service.url);
          const loadBefore = loadavg()[0] ?? 0;
          const pressureBefore = cpuPressureMicros();
          const besideBefore = beside === undefined ? 0 : await succeededJobs(beside.url);
          const [submit, probe, control] = await Promise.all([
            variant.gen === 'fetch'
              ? fetchLoop(service.url, rate, seconds)
              : openLoop({
                  port: service.port,
                  ...(variant.get
                    ? { method: 'GET', path: `/api/jobs/${MISSING}`, expect: 404 }
                    : { method: 'POST', path: '/api/jobs', body: BODY, expect: 202 }),
                  rate,
                  seconds,
                  delayMs: 300,
                }),
            floor === undefined
              ? undefined
              : openLoop({
                  port: Number(new URL(floor.url).port),
                  method: 'GET',
                  path: '/health/live',
                  rate: probeRate,
                  seconds,
                  expect: 200,
                  connections: 16,
                  delayMs: 300,
                }),
            variant.control === 0
              ? undefined
              : openLoop({
                  port: service.port,
                  method: 'GET',
                  path: `/api/jobs/${MISSING}`,
                  rate: variant.control,
                  seconds,
                  expect: 404,
                  connections: 16,
                  delayMs: 301,
                }),
            beside === undefined || variant.backlog > 0
              ? undefined
              : submitAt(beside.port, variant.beside, seconds, {
                  body: args['beside-body'],
                  delayMs: 299,
                }),
          ]);
          const schedAfter = clusterSched(service.pid);
          const besideRate =
            beside === undefined
              ? NaN
              : ((await succeededJobs(beside.url)) - besideBefore) / seconds;
          const pressure = (cpuPressureMicros() - pressureBefore) / 1e4 / seconds;
          const gcAfter = await processMetrics(service.url);
          const own = runs.get(variant.label) ?? [];
          own.push({
            p99: submit.fromWrite[2] ?? NaN,
            floor: probe?.fromWrite[2] ?? NaN,
            pressure,
          });
          runs.set(variant.label, own);
          const perProcess = [...schedAfter].map(([pid, after]) => {
            const before = schedBefore.get(pid) ?? [];
            const [loopRun, loopWait, writerRun, writerWait, otherRun, otherWait] = after.map(
              (value, i) => (value - (before[i] ?? 0)) / 1e6 / seconds,
            ) as [number, number, number, number, number, number];
            const gcA = gcAfter.get(String(pid)) ?? [0, 0, 0, 0];
            const gcB = gcBefore.get(String(pid)) ?? [0, 0, 0, 0];
            const scavenges = (gcA[0] ?? 0) - (gcB[0] ?? 0);
            const scavengeMs = ((gcA[1] ?? 0) - (gcB[1] ?? 0)) * 1000;
            return (
              `loop ${fmt(loopRun, 0)} run/${fmt(loopWait, 0)} wait ms/s, ` +
              `writer ${fmt(writerRun, 0)}/${fmt(writerWait, 0)}, ` +
              `threads ${fmt(otherRun, 0)}/${fmt(otherWait, 0)}, ` +
              `scav ${scavenges} (${fmt(scavengeMs / Math.max(1, scavenges), 1)} ms avg), ` +
              `lag p99/max ${fmt((gcA[2] ?? 0) * 1000, 1)}/${fmt((gcA[3] ?? 0) * 1000, 1)}`
            );
          });
          const line = (r: OpenLoopResult) =>
            `p50 ${fmt(r.fromWrite[0] ?? NaN, 2)} p99 ${fmt(r.fromWrite[2] ?? NaN, 2)} ` +
            `p99.9 ${fmt(r.fromWrite[3] ?? NaN, 1)} max ${fmt(r.fromWrite[4] ?? NaN, 1)}`;
          process.stdout.write(
            `${variant.label.padEnd(14)} r${round} load ${fmt(loadBefore, 2)}→${fmt(loadavg()[0] ?? 0, 2)}, ` +
              `cpu pressure ${fmt(pressure, 0)} % (avg10 before ${fmt(quietAt, 0)}) | ` +
              `submit ${line(submit)} (from due p99 ${fmt(submit.fromDue[2] ?? NaN, 2)}), ` +
              `${submit.failed} failed, gen loop p99/max ${submit.ownLoop.join('/') || '-'} | ` +
              (probe === undefined
                ? ''
                : `bare ${line(probe)}, ratio p99 ${fmt((submit.fromWrite[2] ?? NaN) / (probe.fromWrite[2] ?? NaN), 2)} | `) +
              (control === undefined
                ? ''
                : `control GET ${line(control)}, submit ÷ control p99 ${fmt((submit.fromWrite[2] ?? NaN) / (control.fromWrite[2] ?? NaN), 2)} | `) +
              (beside === undefined ? '' : `beside: ${fmt(besideRate, 0)} jobs/s run | `) +
              `${perProcess.join(' ; ')}\n`,
          );
        } finally {
          await beside?.stop();
          await service.stop();
        }
      }
    }
    // Medians over the rounds, and over the quieter half of them (CPU pressure at or below the median).
    const allPressures = [...runs.values()].flat().map((run) => run.pressure);
    const quiet = median(allPressures);
    process.stdout.write(
      `\nmedians (quiet: CPU pressure ≤ ${fmt(quiet, 0)} %, the median run's)\n`,
    );
    for (const [label, own] of runs) {
      const calm = own.filter((run) => run.pressure <= quiet);
      const describe = (some: typeof own) =>
        some.length === 0
          ? '-'
          : `p99 ${fmt(median(some.map((run) => run.p99)), 2)} ms, bare ${fmt(median(some.map((run) => run.floor)), 2)} ms (${some.length} runs)`;
      process.stdout.write(
        `${label.padEnd(14)} all: ${describe(own)} | quiet: ${describe(calm)}\n`,
      );
    }
  } finally {
    await floor?.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
