/**
 * The admin surface and the memory budget:
 *
 * 0. What an operator-route flood costs tasks: `factorial` throughput alone,
 *    beside 50 connections scraping `/metrics` back to back, and beside 50
 *    asking the detailed `/health`, alternated in one run, for each of: the
 *    public port or `ADMIN_PORT`, with the operator routes' per-client limit
 *    and health cache off (as before them) and at their defaults. The flood
 *    runs in a process of its own (autocannon's CLI), so it does not share the
 *    task load's event loop; it runs 3 s before the tasks are measured.
 * 1. What a scrape costs the service's main threads beside a `/health/live`
 *    request: one scrape a second apart (a fresh collection every time), and
 *    scrapes back to back (after: answered from the shared collection).
 * 2. `compute` throughput with and without 80 scrapes a second beside it, and
 *    how long 200 scrapes sent at once take to be answered.
 * 3. 30 concurrent 64 MiB `hash` uploads: answers, peak RSS, RSS 10 s later,
 *    and the liveness probe's p99 while they arrive.
 *
 *   npx tsx bench/admin.ts [--before <checkout>] [--seconds 10] [--only flood]
 *
 * `--before` names another checkout of corepool, built (`npm run build`), run
 * the same way with the same environment; its scrapes go to the public port.
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { freePort, launchProcess, type ServiceProcess } from '../test/support/service-process';
import { sumMainThreadCpuMicros } from '../test/support/process-tree';
import { buildIfNeeded } from './lib/build';
import { fixedAmount, probe, throughput, type Target } from './lib/load';
import { forAnyBuild } from './lib/older-builds';
import { ROOT } from './lib/servers';

const { values: args } = parseArgs({
  options: {
    before: { type: 'string' },
    seconds: { type: 'string', default: '10' },
    only: { type: 'string' },
    rounds: { type: 'string', default: '3' },
  },
});
const SECONDS = Number(args.seconds);
const MiB = 1024 * 1024;
const log = (line: string) => process.stdout.write(`${line}\n`);

interface Build {
  readonly label: string;
  readonly cwd: string;
  /** Where scrapes go: the admin port after, the public one before. */
  readonly adminPort: boolean;
}

async function start(build: Build, env: Record<string, string>) {
  const adminPort = build.adminPort ? await freePort() : undefined;
  const service = await launchProcess({
    label: build.label,
    cwd: build.cwd,
    env: {
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      ...forAnyBuild(env),
      ...(adminPort === undefined ? {} : { ADMIN_PORT: String(adminPort) }),
    },
    readyLines: {
      pattern: /Nest application successfully started/,
      count: Number(env.CLUSTER_PROCESSES ?? 1),
    },
    timeoutMs: 60_000,
    discardOutputAfterReady: true,
  });
  const admin = adminPort === undefined ? service.url : `http://127.0.0.1:${adminPort}`;
  return { service, admin };
}

/** Main-thread CPU (every process of the service) per request, one at a time, `gapMs` apart, in µs. */
async function cpuPerSpacedRequest(
  service: ServiceProcess,
  url: string,
  count: number,
  gapMs: number,
): Promise<number> {
  const before = sumMainThreadCpuMicros(service.pid);
  for (let i = 0; i < count; i++) {
    await (await fetch(url)).arrayBuffer();
    await sleep(gapMs);
  }
  return (sumMainThreadCpuMicros(service.pid) - before) / count;
}

/** Main-thread CPU per answered request under closed-loop load (4 connections, 5 s), in µs. */
async function cpuPerLoadedRequest(service: ServiceProcess, target: Target): Promise<number> {
  const before = sumMainThreadCpuMicros(service.pid);
  const result = await throughput(target, 4, 5);
  return (sumMainThreadCpuMicros(service.pid) - before) / result.ok;
}

async function scrapeCost(build: Build): Promise<string> {
  const { service, admin } = await start(build, { CLUSTER_PROCESSES: '2', POOL_THREADS: '1' });
  try {
    const live = await cpuPerLoadedRequest(service, { url: service.url, path: '/health/live' });
    const loaded = await cpuPerLoadedRequest(service, { url: admin, path: '/metrics' });
    const spaced = await cpuPerSpacedRequest(service, `${admin}/metrics`, 12, 1_100);
    const times = (cost: number) => `${cost.toFixed(0)} µs (${(cost / live).toFixed(1)} ×)`;
    return `| ${build.label} | ${live.toFixed(0)} µs | ${times(spaced)} | ${times(loaded)} |`;
  } finally {
    await service.stop();
  }
}

/** Scrapes at `perSecond`, open loop (autocannon's overall rate), until stopped; resolves with scrapes/s. */
function scrapeAtRate(url: string, perSecond: number): () => Promise<number> {
  let instance: autocannon.Instance | undefined;
  const result = new Promise<autocannon.Result>((done) => {
    instance = autocannon(
      { url: `${url}/metrics`, connections: 8, overallRate: perSecond, duration: 3600 },
      (_error: unknown, outcome: autocannon.Result) => done(outcome),
    );
  });
  return async () => {
    instance?.stop();
    const outcome = await result;
    return outcome['2xx'] / outcome.duration;
  };
}

/** The tasks measured beside scrapes and floods: `factorial` of 2,000, a few ms on a thread. */
const factorialTarget = (url: string): Target => ({
  url,
  path: '/api/tasks/factorial',
  method: 'POST',
  body: JSON.stringify({ n: 2000 }),
  contentType: 'application/json',
});

async function scrapesBesideTasks(build: Build): Promise<string> {
  const { service, admin } = await start(build, { CLUSTER_PROCESSES: '2', POOL_THREADS: '1' });
  const target = factorialTarget(service.url);
  try {
    await throughput(target, 4, 2);
    // Alone and beside scrapes, twice, alternating: the machine is shared and its load drifts.
    const alone: number[] = [];
    const beside: number[] = [];
    const scrapeRates: number[] = [];
    for (let round = 0; round < 2; round++) {
      alone.push((await throughput(target, 4, SECONDS)).perSecond);
      const stop = scrapeAtRate(admin, 80);
      beside.push((await throughput(target, 4, SECONDS)).perSecond);
      scrapeRates.push(await stop());
    }
    await sleep(1_200);
    const burstStart = performance.now();
    const burst = await Promise.all(
      Array.from({ length: 200 }, () =>
        fetch(`${admin}/metrics`).then((response) => response.status),
      ),
    );
    const burstMs = performance.now() - burstStart;
    const ok = burst.filter((status) => status === 200).length;
    const list = (values: number[]) => values.map((value) => value.toFixed(0)).join(', ');
    const ratios = alone.map((rate, i) => (beside[i]! / rate).toFixed(2)).join(', ');
    const scrapesPerSecond = scrapeRates.reduce((a, b) => a + b, 0) / scrapeRates.length;
    return `| ${build.label} | ${list(alone)} | ${list(beside)} | ${ratios} | ${scrapesPerSecond.toFixed(0)} | ${burstMs.toFixed(0)} ms (${ok}/200 ok) |`;
  } finally {
    await service.stop();
  }
}

async function bigUploads(build: Build): Promise<string> {
  const env = {
    CLUSTER_PROCESSES: '1',
    POOL_THREADS: '2',
    // The Kubernetes manifest's budget (deploy/kubernetes/deployment.yaml).
    BODY_MEMORY_BUDGET_BYTES: String(128 * MiB),
  };
  const { service } = await start(build, env);
  try {
    const startRss = service.rssMiB();
    let peak = startRss;
    const sampler = setInterval(() => (peak = Math.max(peak, service.rssMiB())), 25);
    const upload: Target = {
      url: service.url,
      path: '/api/tasks/hash',
      method: 'POST',
      body: Buffer.alloc(64 * MiB, 7),
      contentType: 'application/octet-stream',
    };
    const started = performance.now();
    const [uploads, liveness] = await Promise.all([
      fixedAmount(upload, 30, 30),
      // The kubelet's view while they arrive: 20 probes a second for 8 s, open loop.
      probe(service.url, '/health/live', 20, 8),
    ]);
    const uploadSeconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    await sleep(10_000);
    const after = service.rssMiB();
    const answers = `${uploads.ok} ok, ${uploads.non2xx} refused, ${uploads.errors} errors`;
    return `| ${build.label} | ${answers} (${uploadSeconds.toFixed(1)} s) | ${startRss.toFixed(0)} MiB | ${peak.toFixed(0)} MiB | ${after.toFixed(0)} MiB | ${liveness.p99.toFixed(0)} ms |`;
  } finally {
    await service.stop();
  }
}

/** Rounds of "alone, beside a /metrics flood, beside a /health flood", alternated. */
const FLOOD_ROUNDS = Number(args.rounds);
const FLOOD_CONNECTIONS = 50;
const AUTOCANNON_CLI = `${ROOT}/node_modules/autocannon/autocannon.js`;

interface FloodAnswers {
  readonly ok: number;
  readonly refused: number;
  readonly seconds: number;
}

/** 50 connections asking `url` back to back for `seconds`, from a process of their own. */
function flood(url: string, seconds: number): Promise<FloodAnswers> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [AUTOCANNON_CLI, '-j', '-c', String(FLOOD_CONNECTIONS), '-d', String(seconds), url],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('error', fail);
    child.once('exit', () => {
      try {
        const result = JSON.parse(out) as { '2xx': number; non2xx: number; duration: number };
        done({ ok: result['2xx'], refused: result.non2xx, seconds: result.duration });
      } catch (error) {
        fail(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

/** How long a flood runs before the tasks are measured: its process starts slowly on a busy machine. */
const FLOOD_LEAD_MS = 3_000;

/** Task throughput while a flood of `path` runs on `base`, from its lead on. */
async function besideFlood(target: Target, base: string, path: string) {
  const running = flood(`${base}${path}`, SECONDS + FLOOD_LEAD_MS / 1000 + 1);
  await sleep(FLOOD_LEAD_MS);
  const tasks = await throughput(target, 4, SECONDS);
  const answers = await running;
  return { tasks: tasks.perSecond, answers };
}

async function operatorFlood(build: Build, limits: boolean): Promise<string> {
  // Two processes of one thread: the default on this 2-core machine.
  const { service, admin } = await start(build, {
    CLUSTER_PROCESSES: '2',
    ...(limits ? {} : { OPERATOR_REQUESTS_PER_SECOND: '0', HEALTH_CACHE_MS: '0' }),
  });
  const target = factorialTarget(service.url);
  try {
    await throughput(target, 4, 2);
    const alone: number[] = [];
    const metrics: number[] = [];
    const health: number[] = [];
    const answered: string[] = [];
    const perSecond = ({ ok, refused, seconds }: FloodAnswers) =>
      `${(ok / seconds).toFixed(0)} + ${(refused / seconds).toFixed(0)}`;
    for (let round = 0; round < FLOOD_ROUNDS; round++) {
      alone.push((await throughput(target, 4, SECONDS)).perSecond);
      const besideMetrics = await besideFlood(target, admin, '/metrics');
      metrics.push(besideMetrics.tasks);
      const besideHealth = await besideFlood(target, admin, '/health');
      health.push(besideHealth.tasks);
      answered.push(`${perSecond(besideMetrics.answers)} / ${perSecond(besideHealth.answers)}`);
    }
    const list = (values: number[]) => values.map((value) => value.toFixed(0)).join(', ');
    // Each flood against the alone round just before it; the median, since the machine drifts.
    const ratios = (values: number[]) => {
      const each = values.map((value, i) => value / alone[i]!);
      return `${each.map((ratio) => ratio.toFixed(2)).join(', ')}; median **${median(each).toFixed(2)}**`;
    };
    const where = build.adminPort ? 'ADMIN_PORT' : 'public port';
    const setting = limits ? 'defaults' : 'limit and health cache off';
    return `| ${build.label} | ${where} | ${setting} | ${list(alone)} | ${list(metrics)} (${ratios(metrics)}) | ${list(health)} (${ratios(health)}) | ${answered.join('; ')} |`;
  } finally {
    await service.stop();
  }
}

async function floodRows(): Promise<string[]> {
  log(
    `load average before: ${loadavg()
      .map((load) => load.toFixed(2))
      .join(', ')}`,
  );
  const rows: string[] = [];
  for (const adminPort of [false, true]) {
    for (const limits of [false, true]) {
      rows.push(await operatorFlood({ label: 'after', cwd: ROOT, adminPort }, limits));
    }
  }
  return rows;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function logFloodRows(rows: readonly string[]): void {
  log(
    `\nload average after: ${loadavg()
      .map((load) => load.toFixed(2))
      .join(', ')}`,
  );
  log(
    `\ncompute (factorial 2000, 4 connections, ${SECONDS} s) alone and beside ${FLOOD_CONNECTIONS} connections flooding an operator route, ${FLOOD_ROUNDS} rounds alternated (default processes and threads):\n`,
  );
  log(
    '| build | operator routes on | operator limits | tasks/s alone | tasks/s beside a /metrics flood (ratio) | tasks/s beside a /health flood (ratio) | flood answers/s, 2xx + refused (/metrics / /health) |',
  );
  log('| --- | --- | --- | --- | --- | --- | --- |');
  rows.forEach((row) => log(row));
}

async function main(): Promise<void> {
  buildIfNeeded(log);
  const flooded = await floodRows();
  if (args.only === 'flood') return logFloodRows(flooded);
  const builds: Build[] = [
    ...(args.before === undefined ? [] : [{ label: 'before', cwd: args.before, adminPort: false }]),
    { label: 'after', cwd: ROOT, adminPort: true },
  ];
  const rows = { cost: [] as string[], besideTasks: [] as string[], uploads: [] as string[] };
  for (const build of builds) {
    rows.cost.push(await scrapeCost(build));
    rows.besideTasks.push(await scrapesBesideTasks(build));
    rows.uploads.push(await bigUploads(build));
  }
  log('\nMain-thread CPU per request, every process (2 processes × 1 thread):\n');
  log('| build | /health/live under load | /metrics, 1.1 s apart | /metrics under load |');
  log('| --- | --- | --- | --- |');
  rows.cost.forEach((row) => log(row));
  log(`\ncompute (factorial 2000, 4 connections, ${SECONDS} s, twice) beside 80 scrapes/s:\n`);
  log(
    '| build | tasks/s alone | tasks/s beside scrapes | ratio | scrapes/s answered | 200 scrapes at once |',
  );
  log('| --- | --- | --- | --- | --- | --- |');
  rows.besideTasks.forEach((row) => log(row));
  log('\n30 concurrent 64 MiB hash uploads (1 process × 2 threads, budget 128 MiB):\n');
  log('| build | answers | RSS before | peak RSS | RSS 10 s after | /health/live p99 |');
  log('| --- | --- | --- | --- | --- | --- |');
  rows.uploads.forEach((row) => log(row));
  logFloodRows(flooded);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
