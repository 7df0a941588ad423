/**
 * Does lowering the worker threads' priority (WORKER_NICE_INCREMENT) keep the
 * event loop responsive when every core is busy with tasks?
 *
 * Starts the built service twice, side by side in one run: threads at normal
 * priority (0) and lowered (10, and 19: the default). Each time, every thread is kept busy with
 * `compute` tasks while `GET /health/live` is sampled at a steady rate; the
 * probe's latency is the event loop's responsiveness.
 *
 *   npm run build && npx tsx bench/event-loop-priority.ts
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const PORT = 3917;
const BASE = `http://127.0.0.1:${PORT}`;
const SECONDS = Number(process.env.SECONDS ?? 15);

async function waitUntilUp(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${BASE}/health/live`)).ok) return;
    } catch {
      // not yet listening
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('service did not start');
}

function start(nice: number): ChildProcess {
  return spawn(process.execPath, [join(__dirname, '..', 'dist', 'main.js')], {
    env: {
      ...process.env,
      PORT: String(PORT),
      HOST: '127.0.0.1',
      CLUSTER_WORKERS: '1',
      POOL_THREADS: String(availableParallelism()),
      POOL_MAX_QUEUE: '10000',
      WORKER_NICE_INCREMENT: String(nice),
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function measure(nice: number) {
  const child = start(nice);
  await waitUntilUp();
  let running = true;
  // Two tasks in flight per thread: every thread always has work.
  const load = Array.from({ length: availableParallelism() * 2 }, async () => {
    while (running) {
      await fetch(`${BASE}/api/compute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ iterations: 5_000_000, payloadSize: 10_000 }),
      });
    }
  });
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const latencies: number[] = [];
  const until = Date.now() + SECONDS * 1000;
  while (Date.now() < until) {
    const started = performance.now();
    await fetch(`${BASE}/health/live`);
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  running = false;
  await Promise.all(load);
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  latencies.sort((a, b) => a - b);
  return {
    nice,
    samples: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? NaN,
  };
}

async function main(): Promise<void> {
  const results = [];
  for (const nice of [0, 10, 19]) results.push(await measure(nice));
  console.log(
    `cores: ${availableParallelism()}, threads: ${availableParallelism()}, ${SECONDS} s each`,
  );
  console.log('| WORKER_NICE_INCREMENT | samples | p50 ms | p99 ms | max ms |');
  console.log('|---|---|---|---|---|');
  for (const r of results) {
    console.log(
      `| ${r.nice} | ${r.samples} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.max.toFixed(2)} |`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
