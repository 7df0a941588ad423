/**
 * Where the heavy requests of a cluster go: the full bench's sequence for the
 * 2 × 1 configuration (isolation probe idle, then busy beside heavy load on
 * 4 connections; then the heavy warm-up and the counted heavy run), with each
 * answer's process and client port read from the access log, and each
 * process's established connections and task-thread CPU sampled every 250 ms
 * from ss(8) and /proc. Several settings run in turns (A, B, A, B …), so
 * drift on a shared machine weighs on all alike.
 *
 *   npm run build && npx tsx bench/cluster-heavy.ts [--rounds=2] [--quick] \
 *     [--variant=NAME=VALUE,…]… [--verbose]
 *
 * Each --variant is one more configuration of this build (beside the default
 * 2 × 1); without one, only the default runs.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { background, probe, throughput, warmUp, type Target } from './lib/load';
import { parallelRate } from './lib/parallel-rate';
import { ROOT } from './lib/servers';
import { launchProcess, BUILT_MAIN, type ServiceProcess } from '../test/support/service-process';

const quick = process.argv.includes('--quick');
const verbose = process.argv.includes('--verbose');
const rounds = Number(
  process.argv.find((a) => a.startsWith('--rounds='))?.slice('--rounds='.length) ?? '2',
);
const variants: Record<string, string>[] = [
  {},
  ...process.argv
    .filter((arg) => arg.startsWith('--variant='))
    .map((arg) =>
      Object.fromEntries(
        arg
          .slice('--variant='.length)
          .split(',')
          .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
      ),
    ),
];

const CORES = availableParallelism();
const HEAVY_INPUT = { iterations: 2_000_000, payloadSize: 10_000 };
const PLAN = quick
  ? { probeIdle: 2, probeBusy: 3, heavyWarm: 1, heavy: 4 }
  : { probeIdle: 10, probeBusy: 10, heavyWarm: 2, heavy: 10 };
const CONNECTIONS = CORES * 2;
const CLK_TCK = 100;

const label = (env: Record<string, string>) =>
  Object.keys(env).length === 0
    ? 'this build'
    : Object.entries(env)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ');

interface Answer {
  time: number;
  pid: number;
  port: number;
  status: number;
}

/** Access-log lines of the heavy route: which process answered which client port when. */
function answers(lines: readonly string[], from: number): Answer[] {
  const out: Answer[] = [];
  for (const line of lines.slice(from)) {
    if (!line.includes('/api/tasks/compute') || !line.includes('"res"')) continue;
    try {
      const entry = JSON.parse(line) as {
        time: number;
        pid: number;
        req: { remotePort: number };
        res: { statusCode: number };
      };
      out.push({
        time: entry.time,
        pid: entry.pid,
        port: entry.req.remotePort,
        status: entry.res.statusCode,
      });
    } catch {
      // not JSON
    }
  }
  return out;
}

/** The HTTP processes: children of the primary. */
function children(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) {
        out.push(Number(entry));
      }
    } catch {
      // gone
    }
  }
  return out.sort();
}

/** CPU ticks of a process's threads other than the main one (the task thread and helpers). */
function offMainTicks(pid: number): number {
  let ticks = 0;
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      if (Number(task) === pid) continue;
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    }
  } catch {
    // gone
  }
  return ticks;
}

/** Established server-side connections on `port`, per owning pid (ss -tnp). */
function connectionsByPid(port: number): Map<number, number> {
  const counts = new Map<number, number>();
  const out = execFileSync('ss', ['-tnpH', 'state', 'established', `( sport = :${port} )`], {
    encoding: 'utf8',
  });
  for (const match of out.matchAll(/pid=(\d+)/g)) {
    const pid = Number(match[1]);
    counts.set(pid, (counts.get(pid) ?? 0) + 1);
  }
  return counts;
}

interface Sample {
  t: number;
  phase: string;
  conns: Map<number, number>;
  cpu: Map<number, number>;
}

function sampler(service: ServiceProcess, phase: () => string) {
  const samples: Sample[] = [];
  const last = new Map<number, number>();
  const timer = setInterval(() => {
    const pids = children(service.pid);
    const cpu = new Map<number, number>();
    for (const pid of pids) {
      const now = offMainTicks(pid);
      cpu.set(pid, last.has(pid) ? now - (last.get(pid) ?? 0) : 0);
      last.set(pid, now);
    }
    samples.push({ t: Date.now(), phase: phase(), conns: connectionsByPid(service.port), cpu });
  }, 250);
  return {
    samples,
    stop: () => clearInterval(timer),
  };
}

async function runOnce(variant: Record<string, string>, idealPerSecond: number) {
  // CHECKOUT=<dir> runs another checkout's build (its dist/), e.g. the branch point.
  const { CHECKOUT: checkout, ...env } = variant;
  const service = await launchProcess({
    label: label(variant),
    args: [checkout === undefined ? BUILT_MAIN : resolve(checkout, 'dist', 'main.js')],
    cwd: checkout ?? ROOT,
    env: { NODE_ENV: 'production', LOG_LEVEL: 'info', CLUSTER_WORKERS: String(CORES), ...env },
    readyLines: {
      pattern: /Nest application successfully started/,
      count: Number(env.CLUSTER_WORKERS ?? CORES),
    },
    timeoutMs: 60_000,
  });
  let phase = 'idle';
  const watch = sampler(service, () => phase);
  const heavy: Target = {
    url: service.url,
    path: '/api/tasks/compute',
    method: 'POST',
    body: JSON.stringify(HEAVY_INPUT),
    contentType: 'application/json',
  };
  const marks: Record<string, [number, number]> = {};
  const mark = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
    phase = name;
    const from = Date.now();
    const out = await run();
    marks[name] = [from, Date.now()];
    return out;
  };
  try {
    const idle = await mark('probe-idle', () =>
      probe(service.url, '/health/live', 50, PLAN.probeIdle),
    );
    const busy = await mark('probe-busy', async () => {
      const stop = background(heavy, CONNECTIONS);
      await new Promise((done) => setTimeout(done, 1000));
      const result = await probe(service.url, '/health/live', 50, PLAN.probeBusy);
      await stop();
      return result;
    });
    await mark('heavy-warm', () => warmUp(heavy, CONNECTIONS, PLAN.heavyWarm, idealPerSecond));
    const counted = await mark('heavy', () => throughput(heavy, CONNECTIONS, PLAN.heavy));
    return { env: variant, idle, busy, counted, service, marks, samples: watch.samples };
  } finally {
    watch.stop();
    await service.shutdown();
  }
}

function report(run: Awaited<ReturnType<typeof runOnce>>, idealPerSecond: number): string {
  const { idle, busy, counted, service, marks, samples } = run;
  const all = answers(service.lines, 0);
  const lines: string[] = [];
  const [hFrom, hTo] = marks.heavy ?? [0, 0];
  const inHeavy = all.filter((a) => a.time >= hFrom && a.time <= hTo);
  const byPid = new Map<number, { n: number; ports: Set<number> }>();
  for (const a of inHeavy) {
    const entry = byPid.get(a.pid) ?? { n: 0, ports: new Set<number>() };
    entry.n += 1;
    entry.ports.add(a.port);
    byPid.set(a.pid, entry);
  }
  const pids = [...new Set(all.map((a) => a.pid))].sort();
  const heavySamples = samples.filter((s) => s.phase === 'heavy');
  const meanConns = (pid: number, phase: string) => {
    const s = samples.filter((x) => x.phase === phase);
    return s.reduce((sum, x) => sum + (x.conns.get(pid) ?? 0), 0) / Math.max(1, s.length);
  };
  const cpuShare = (pid: number, phase: string) => {
    const s = samples.filter((x) => x.phase === phase);
    const ticks = s.reduce((sum, x) => sum + (x.cpu.get(pid) ?? 0), 0);
    return ticks / CLK_TCK / Math.max(0.001, s.length * 0.25);
  };
  lines.push(
    `${label(run.env)}: heavy ${counted.perSecond.toFixed(1)}/s (${(counted.perSecond / idealPerSecond).toFixed(2)} × ideal, non2xx ${counted.non2xx}, errors ${counted.errors}); ` +
      `probe p99 idle ${idle.p99.toFixed(2)} busy ${busy.p99.toFixed(2)} ms (${(busy.p99 / idle.p99).toFixed(2)} ×), busy max ${busy.max.toFixed(1)}`,
  );
  for (const pid of pids) {
    const h = byPid.get(pid);
    lines.push(
      `  process ${pid}: heavy answers ${h?.n ?? 0} from ${h?.ports.size ?? 0} client ports; ` +
        `mean conns busy ${meanConns(pid, 'probe-busy').toFixed(1)} warm ${meanConns(pid, 'heavy-warm').toFixed(1)} heavy ${meanConns(pid, 'heavy').toFixed(1)}; ` +
        `off-main CPU (cores) busy ${cpuShare(pid, 'probe-busy').toFixed(2)} heavy ${cpuShare(pid, 'heavy').toFixed(2)}`,
    );
  }
  const other = service.lines.filter(
    (l) =>
      /"level":(40|50|60)/.test(l) ||
      /rebalance|making room|moving connections|holds|listen/i.test(l),
  );
  for (const l of other) {
    const time = Number(/"time":(\d+)/.exec(l)?.[1] ?? hFrom);
    const msg = /"msg":"([^"]*)"/.exec(l)?.[1] ?? l.slice(0, 200);
    lines.push(
      `  log t${time - hFrom >= 0 ? '+' : ''}${((time - hFrom) / 1000).toFixed(1)} s: ${msg}`,
    );
  }
  // Heavy answers per second of the counted run, per process.
  const perSecond: string[] = [];
  for (let t = hFrom; t < hTo; t += 1000) {
    const second = inHeavy.filter((a) => a.time >= t && a.time < t + 1000);
    perSecond.push(pids.map((pid) => second.filter((a) => a.pid === pid).length).join(':'));
  }
  lines.push(`  heavy answers per second (${pids.join(':')}): ${perSecond.join(' ')}`);
  lines.push(`  lopsided seconds: ${lopsided(inHeavy, pids, hFrom, hTo)}`);
  if (verbose) {
    for (const s of heavySamples) {
      lines.push(
        `  ${s.phase} t+${s.t - hFrom} conns ${[...s.conns].map(([p, n]) => `${p}:${n}`).join(' ')} cpu ${[...s.cpu].map(([p, n]) => `${p}:${n}`).join(' ')}`,
      );
    }
  }
  return lines.join('\n');
}

/**
 * Whole seconds of the counted run in which a process answered at most a
 * fifth of the heavy answers while there are two or more: its thread idled
 * (mostly) while the other's tasks waited. Independent of the machine's
 * speed, which other people's load moves by half from one run to the next.
 */
function lopsided(inHeavy: readonly Answer[], pids: readonly number[], from: number, to: number) {
  if (pids.length < 2) return 0;
  let count = 0;
  for (let t = from; t + 1000 <= to; t += 1000) {
    const second = inHeavy.filter((a) => a.time >= t && a.time < t + 1000);
    const fewest = Math.min(...pids.map((pid) => second.filter((a) => a.pid === pid).length));
    if (second.length > 0 && fewest <= second.length / 5) count += 1;
  }
  return count;
}

async function main(): Promise<void> {
  const load = () =>
    loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
  process.stderr.write(`load average ${load()}\n`);
  const taskFile = resolve(ROOT, 'dist', 'tasks', 'compute.task.js');
  const summary = new Map<
    string,
    Array<{ ratio: number; isolation: number; lopsided: number; seconds: number }>
  >();
  for (let round = 1; round <= rounds; round++) {
    for (const env of variants) {
      // The ideal right before each run: the machine's speed drifts with other people's load.
      const single = (await parallelRate(taskFile, HEAVY_INPUT, 1, quick ? 2 : 3)).perSecond;
      const ideal = single * CORES;
      process.stdout.write(`single thread ${single.toFixed(1)}/s, ideal ${ideal.toFixed(1)}/s\n`);
      const run = await runOnce(env, ideal);
      process.stdout.write(`round ${round} (load ${load()}) ${report(run, ideal)}\n`);
      const key = label(env);
      const all = summary.get(key) ?? [];
      const answered = answers(run.service.lines, 0);
      const [from, to] = run.marks.heavy ?? [0, 0];
      const inHeavy = answered.filter((a) => a.time >= from && a.time <= to);
      all.push({
        ratio: run.counted.perSecond / ideal,
        isolation: run.busy.p99 / run.idle.p99,
        lopsided: lopsided(inHeavy, [...new Set(answered.map((a) => a.pid))], from, to),
        seconds: Math.floor((to - from) / 1000),
      });
      summary.set(key, all);
    }
  }
  process.stdout.write(`load average after ${load()}\n`);
  process.stdout.write(
    'variant | heavy ÷ ideal, each round | busy ÷ idle p99, each round | lopsided s\n',
  );
  for (const [key, all] of summary) {
    process.stdout.write(
      `${key} | ${all.map((r) => r.ratio.toFixed(2)).join(', ')} | ${all.map((r) => r.isolation.toFixed(2)).join(', ')} | ` +
        `${all.reduce((n, r) => n + r.lopsided, 0)} of ${all.reduce((n, r) => n + r.seconds, 0)}\n`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
