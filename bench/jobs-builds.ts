/**
 * Two (or more) builds of the service side by side on the jobs path (ADR 0017):
 * for each, on the default 2-process cluster with a fresh SQLite file, the
 * tiny-job throughput (`--jobs` over 32 connections, until all succeeded),
 * then submissions at `--rate`/s for `--seconds` (open loop): p50 / p99 / max.
 * Builds alternate, in reverse order every other round, so that a machine
 * whose load changes does not favour one.
 *
 *   git archive <commit> | tar -x -C /tmp/base && (cd /tmp/base && ln -s "$PWD/node_modules" . && npx nest build)
 *   npx tsx bench/jobs-builds.ts --build base=/tmp/base/dist/main.js --build new=dist/main.js
 *
 * `--get`: `GET` a missing job instead of submitting (the route's floor, no write).
 * `--control <rate>`: during the submissions, also `GET` a missing job at that
 * rate (ADR 0022): the same machine's floor under the same load, in the same
 * seconds; each line then gives submit p99 ÷ control p99.
 *
 * CPU per submission over the timed seconds (Linux, /proc): the service's
 * processes with all their threads, and their event-loop threads alone. CPU
 * time does not count the time a thread waited for a core, so it moves far
 * less with the machine's load than the latencies do.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { launchProcess } from '../test/support/service-process';
import { FAULT_TASKS } from '../test/support/test-config';
import { fmt, summarize } from './lib/stats';
import { succeededJobs } from './lib/tiny-job';

const { values: args } = parseArgs({
  options: {
    build: { type: 'string', multiple: true, default: ['current=dist/main.js'] },
    rounds: { type: 'string', default: '2' },
    rate: { type: 'string', default: '500' },
    seconds: { type: 'string', default: '8' },
    jobs: { type: 'string', default: '2000' },
    get: { type: 'boolean', default: false },
    control: { type: 'string', default: '0' },
  },
});
const BODY = JSON.stringify({ task: 'thread-id', input: {} });
const MISSING = '00000000-0000-4000-8000-000000000000';
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** One call; ok is the answer expected (202 for a submission, 404 for the missing job). */
async function call(url: string, get = args.get): Promise<{ ms: number; ok: boolean }> {
  const started = performance.now();
  try {
    const response = get
      ? await fetch(`${url}/api/jobs/${MISSING}`)
      : await fetch(`${url}/api/jobs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: BODY,
        });
    await response.arrayBuffer();
    return { ms: performance.now() - started, ok: response.status === (get ? 404 : 202) };
  } catch {
    return { ms: performance.now() - started, ok: false };
  }
}

async function throughput(url: string, jobs: number): Promise<number> {
  const before = await succeededJobs(url);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < jobs) {
        next += 1;
        await call(url);
      }
    }),
  );
  while ((await succeededJobs(url)) - before < jobs) {
    if (performance.now() - started > 300_000) throw new Error('jobs did not finish in 5 min');
    await sleep(20);
  }
  return jobs / ((performance.now() - started) / 1000);
}

/** CPU ms so far of the cluster's processes: every thread, and the main (event-loop) threads alone. */
function clusterCpu(primary: number): { all: number; loops: number } {
  const ticks = (path: string) => {
    try {
      // utime and stime: fields 14 and 15, after the parenthesised name.
      const fields = readFileSync(path, 'utf8').split(') ')[1]?.split(' ') ?? [];
      return (Number(fields[11]) + Number(fields[12])) * 10; // 100 ticks a second
    } catch {
      return 0; // exited
    }
  };
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${primary}/task/${primary}/children`, 'utf8')
      .trim()
      .split(' ')
      .filter(Boolean)
      .map(Number);
  } catch {
    // not Linux: no CPU figures
  }
  const pids = [primary, ...children];
  return {
    all: pids.reduce((sum, pid) => sum + ticks(`/proc/${pid}/stat`), 0),
    loops: pids.reduce((sum, pid) => sum + ticks(`/proc/${pid}/task/${pid}/stat`), 0),
  };
}

async function atRate(url: string, rate: number, seconds: number, get = args.get) {
  const latencies: number[] = [];
  let failed = 0;
  const pending: Promise<void>[] = [];
  // A control starts half a period late, so that its calls fall between the submissions.
  const started = performance.now() + (get === args.get ? 0 : 500 / rate);
  for (let i = 0; i < rate * seconds; i++) {
    const wait = started + (i * 1000) / rate - performance.now();
    if (wait > 1) await sleep(wait);
    pending.push(
      call(url, get).then(({ ms, ok }) => {
        latencies.push(ms);
        if (!ok) failed += 1;
      }),
    );
  }
  await Promise.all(pending);
  return { ...summarize(latencies), failed };
}

async function main(): Promise<void> {
  const builds = (args.build ?? []).map((spec) => {
    const [label, main] = spec.split('=') as [string, string];
    return { label, main: resolve(main) };
  });
  const rate = Number(args.rate);
  const jobs = args.get ? 0 : Number(args.jobs);
  for (let round = 0; round < Number(args.rounds); round++) {
    for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
      const service = await launchProcess({
        args: [build.main],
        env: {
          NODE_ENV: 'production',
          LOG_LEVEL: 'warn',
          TASK_MODULES: FAULT_TASKS,
          CLUSTER_WORKERS: '2',
          JOBS_SQLITE_PATH: join(mkdtempSync(join(tmpdir(), 'corepool-builds-')), 'jobs.sqlite'),
        },
        discardOutputAfterReady: true,
      });
      try {
        for (let i = 0; i < 200; i++) await call(service.url); // warm-up
        const perSecond = jobs > 0 ? await throughput(service.url, jobs) : 0;
        await sleep(500);
        const seconds = Number(args.seconds);
        const controlRate = Number(args.control);
        const cpuBefore = clusterCpu(service.pid);
        const [at, control] = await Promise.all([
          atRate(service.url, rate, seconds),
          controlRate > 0 ? atRate(service.url, controlRate, seconds, true) : undefined,
        ]);
        const cpuAfter = clusterCpu(service.pid);
        const submissions = rate * seconds;
        const cpu =
          `| CPU µs/submission ${fmt(((cpuAfter.all - cpuBefore.all) * 1000) / submissions)}, ` +
          `event loops ${fmt(((cpuAfter.loops - cpuBefore.loops) * 1000) / submissions)} `;
        const controlled =
          control === undefined
            ? ''
            : `| control GET p50 ${fmt(control.p50, 1)} p99 ${fmt(control.p99, 1)} ms, ` +
              `submit p99 ÷ control p99 ${fmt(at.p99 / control.p99, 2)} `;
        process.stdout.write(
          `${build.label.padEnd(12)} round ${round}: ${fmt(perSecond)} jobs/s | ${rate}/s ` +
            `p50 ${fmt(at.p50, 1)} p99 ${fmt(at.p99, 1)} max ${fmt(at.max, 1)} ms, ` +
            `${at.failed} failed ${controlled}${cpu}| load ${fmt(loadavg()[0] ?? 0, 2)}\n`,
        );
      } finally {
        await service.stop();
      }
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
