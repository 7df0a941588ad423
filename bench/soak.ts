/**
 * Soak: holds ~70 % of the service's measured capacity for a long time and reports
 * errors, latency (p50/p99) and resident memory over time. A leak shows as RSS that keeps
 * climbing; a slow degradation as a p99 that drifts up; anything else as errors.
 *
 *   npm run bench:soak                         # 5 minutes against a fresh dist/main.js
 *   SOAK_SECONDS=60 SOAK_LOAD=0.7 npm run bench:soak
 *   npm run bench:soak -- --seconds 600
 *
 * The service is started with this process's environment (CLUSTER_PROCESSES, POOL_THREADS, …),
 * on a free loopback port. The exit code is 1 when any request failed.
 */
import { performance } from 'node:perf_hooks';
import { sumRssKiB } from '../test/support/process-tree';
import { launchProcess } from '../test/support/service-process';

export interface SoakOptions {
  /** Base URL of a running service; with `pid`, whose memory is sampled (and its children's). */
  readonly url: string;
  readonly pid: number;
  readonly durationMs: number;
  /** Share of the measured capacity to hold, 0..1. */
  readonly load?: number;
  /** How long to measure capacity (closed loop, every thread busy). */
  readonly calibrationMs?: number;
  /** How often to print a line (and sample RSS). */
  readonly reportEveryMs?: number;
  /** A request unanswered after this long counts as an error. */
  readonly requestTimeoutMs?: number;
  readonly log?: (line: string) => void;
}

export interface SoakReport {
  readonly capacityPerSecond: number;
  readonly targetPerSecond: number;
  readonly sent: number;
  readonly succeeded: number;
  readonly errors: Record<string, number>;
  readonly errorCount: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** RSS of the service's processes, sampled every `reportEveryMs`, in MB. */
  readonly rssMb: number[];
}

/** The mix of real tasks the soak sends, round robin: small, varied, all CPU-bound. */
const REQUESTS: ReadonlyArray<{ path: string; type: string; body: string | Buffer }> = [
  { path: '/api/tasks/factorial', type: 'application/json', body: '{"n":2000}' },
  {
    path: '/api/tasks/matrix-multiply',
    type: 'application/json',
    body: '{"size":60,"seed":7,"output":"checksum"}',
  },
  {
    path: '/api/tasks/hash?algorithm=sha256',
    type: 'application/octet-stream',
    body: Buffer.alloc(65_536, 7),
  },
  {
    path: '/api/compute',
    type: 'application/json',
    body: '{"iterations":200000,"payloadSize":1000}',
  },
  {
    path: '/api/tasks/json-stats',
    type: 'application/json',
    body: JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ i, price: i % 17 }))),
  },
];

async function send(
  url: string,
  index: number,
  timeoutMs: number,
): Promise<{ outcome: string; ms: number }> {
  const request = REQUESTS[index % REQUESTS.length]!;
  const started = performance.now();
  try {
    const response = await fetch(`${url}${request.path}`, {
      method: 'POST',
      headers: { 'content-type': request.type },
      body: request.body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    const ms = performance.now() - started;
    if (response.ok) return { outcome: 'ok', ms };
    try {
      return {
        outcome: (JSON.parse(text) as { code?: string }).code ?? `HTTP ${response.status}`,
        ms,
      };
    } catch {
      return { outcome: `HTTP ${response.status}`, ms };
    }
  } catch (error) {
    const ms = performance.now() - started;
    return { outcome: (error as Error).name === 'TimeoutError' ? 'timeout' : 'network error', ms };
  }
}

/** One request of the soak's mix: the `index`-th, round robin. */
export { send as sendMixedRequest };

/** Resident memory of a process and all its descendants, in MB, to one decimal. */
const treeRssMb = (pid: number) => Math.round((sumRssKiB(pid) / 1024) * 10) / 10;

function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

/** Requests per second the service completes with every thread kept busy (closed loop). */
async function measureCapacity(
  url: string,
  durationMs: number,
  timeoutMs: number,
): Promise<number> {
  const concurrency = 16;
  const until = performance.now() + durationMs;
  let done = 0;
  let index = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const { outcome } = await send(url, index++, timeoutMs);
        if (outcome === 'ok') done += 1;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

/**
 * Measures capacity, then sends requests at `load` × that rate (open loop: arrivals do not
 * wait for answers, as real clients do not) for `durationMs`, printing a line per interval.
 */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const {
    url,
    pid,
    durationMs,
    load = 0.7,
    calibrationMs = 5_000,
    reportEveryMs = 10_000,
    requestTimeoutMs = 30_000,
    log = (line: string) => console.log(line),
  } = options;
  const capacityPerSecond = await measureCapacity(url, calibrationMs, requestTimeoutMs);
  const targetPerSecond = Math.max(1, capacityPerSecond * load);
  log(
    `capacity ${capacityPerSecond.toFixed(1)} req/s; holding ${targetPerSecond.toFixed(1)} req/s ` +
      `(${Math.round(load * 100)} %) for ${Math.round(durationMs / 1000)} s`,
  );

  const errors: Record<string, number> = {};
  const latencies: number[] = [];
  const rssMb: number[] = [treeRssMb(pid)];
  let sent = 0;
  let succeeded = 0;
  let windowLatencies: number[] = [];
  let windowErrors = 0;
  const inFlight = new Set<Promise<void>>();
  const started = performance.now();
  let nextReport = started + reportEveryMs;
  log('   t s |   sent | errors | p99 ms (interval) | rss MB');

  const report = () => {
    const sorted = [...windowLatencies].sort((a, b) => a - b);
    const rss = treeRssMb(pid);
    rssMb.push(rss);
    const t = Math.round((performance.now() - started) / 1000);
    log(
      `${String(t).padStart(6)} | ${String(sent).padStart(6)} | ${String(windowErrors).padStart(6)} | ` +
        `${percentile(sorted, 0.99).toFixed(1).padStart(17)} | ${rss}`,
    );
    windowLatencies = [];
    windowErrors = 0;
  };

  // Arrivals on a fixed schedule: request i is due at i / rate seconds.
  for (let i = 0; ; i++) {
    const dueAt = started + (i * 1000) / targetPerSecond;
    if (dueAt - started >= durationMs) break;
    const wait = dueAt - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    if (performance.now() >= nextReport) {
      report();
      nextReport += reportEveryMs;
    }
    sent += 1;
    const request = send(url, i, requestTimeoutMs).then(({ outcome, ms }) => {
      if (outcome === 'ok') {
        succeeded += 1;
        latencies.push(ms);
        windowLatencies.push(ms);
      } else {
        errors[outcome] = (errors[outcome] ?? 0) + 1;
        windowErrors += 1;
      }
      inFlight.delete(request);
    });
    inFlight.add(request);
  }
  await Promise.all(inFlight);
  report();

  latencies.sort((a, b) => a - b);
  const errorCount = Object.values(errors).reduce((sum, n) => sum + n, 0);
  return {
    capacityPerSecond,
    targetPerSecond,
    sent,
    succeeded,
    errors,
    errorCount,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    rssMb,
  };
}

export function describeSoak(report: SoakReport): string {
  const errors = Object.entries(report.errors)
    .map(([code, n]) => `${code}=${n}`)
    .join(' ');
  const rss = report.rssMb;
  return (
    `soak: sent ${report.sent}, succeeded ${report.succeeded}, errors ${report.errorCount}` +
    `${errors === '' ? '' : ` (${errors})`}; p50 ${report.p50Ms.toFixed(1)} ms, ` +
    `p99 ${report.p99Ms.toFixed(1)} ms; rss MB start ${rss[0]}, end ${rss.at(-1)}, ` +
    `max ${Math.max(...rss)}`
  );
}

function secondsFromArgs(): number {
  const flag = process.argv.indexOf('--seconds');
  const value = flag >= 0 ? process.argv[flag + 1] : process.env.SOAK_SECONDS;
  return Number(value ?? 300);
}

async function main(): Promise<void> {
  const seconds = secondsFromArgs();
  const load = Number(process.env.SOAK_LOAD ?? 0.7);
  if (!(seconds > 0) || !(load > 0 && load <= 1)) {
    throw new Error('SOAK_SECONDS (or --seconds) must be > 0 and SOAK_LOAD within (0, 1]');
  }
  // This process's environment (CLUSTER_PROCESSES, POOL_THREADS, …) configures the service.
  const service = await launchProcess({
    label: 'soak',
    env: { LOG_LEVEL: 'warn', NODE_ENV: 'production', ...process.env },
    discardOutputAfterReady: true,
  });
  try {
    const report = await runSoak({
      url: service.url,
      pid: service.pid,
      durationMs: seconds * 1000,
      load,
    });
    console.log(describeSoak(report));
    process.exitCode = report.errorCount > 0 ? 1 : 0;
  } finally {
    await service.shutdown();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
