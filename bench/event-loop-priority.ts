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
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { launchProcess, type ServiceProcess } from '../test/support/service-process';

const SECONDS = Number(process.env.SECONDS ?? 15);

function start(nice: number): Promise<ServiceProcess> {
  return launchProcess({
    label: `WORKER_NICE_INCREMENT=${nice}`,
    env: {
      ...process.env,
      CLUSTER_WORKERS: '1',
      POOL_THREADS: String(availableParallelism()),
      POOL_MAX_QUEUE: '10000',
      WORKER_NICE_INCREMENT: String(nice),
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
    },
    discardOutputAfterReady: true,
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function measure(nice: number) {
  const service = await start(nice);
  const base = service.url;
  let running = true;
  // Two tasks in flight per thread: every thread always has work.
  const load = Array.from({ length: availableParallelism() * 2 }, async () => {
    while (running) {
      await fetch(`${base}/api/compute`, {
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
    await fetch(`${base}/health/live`);
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  running = false;
  await Promise.all(load);
  await service.shutdown();
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
