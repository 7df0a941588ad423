/**
 * How long does a worker thread take to become ready? A pool keeps its size
 * by replacing threads (after a crash, a termination, recycling), and until
 * the replacement has loaded the task code the pool is a thread short.
 *
 * Times spawn → first answer (the warm-up the pool itself sends) for one
 * thread at a time, and the process's CPU time per start (the thread's own
 * work dominates it; the shared machine makes CPU the steadier number), for
 * each layer of a thread start, side by side: every round starts each layer
 * once, so they share the machine's load alike.
 *
 *   1. a plain Node Worker on a file that only answers (Node's own floor),
 *   2. a Piscina thread on a module that loads nothing (+ Piscina's wrapper),
 *   3. the same with Node's compile cache (Piscina's own files are cached too),
 *   4. the thread entry as separate files, no compile cache (before ADR 0019),
 *   5. the thread entry bundled into one file, no compile cache,
 *   6. the separate files with Node's compile cache,
 *   7. what the pool runs: piscinaOptions() of the build (bundle + cache),
 *   8. the same at the default WORKER_NICE_INCREMENT=19.
 *
 * Line 3 is the pool's floor with Piscina: the pool's own code costs line 7
 * minus line 3. The start the thread reports itself (spawn → code loaded,
 * what `compute_pool_thread_start_seconds` records) is printed for line 7.
 *
 * BUSY=n keeps n processes spinning at normal priority meanwhile, as busy
 * event loops do: a thread at nice 19 then gets the CPU only after them.
 *
 *   npm run build && npm run bench:micro -- thread-start      # RUNS=20 by default
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { ROOT } from '../lib/servers';
import { percentile, summarize } from '../lib/stats';

const RUNS = Number(process.env.RUNS ?? 20);
const BUSY = Number(process.env.BUSY ?? 0);
const WORKERS = join(ROOT, 'dist', 'workers');
const SCRATCH = mkdtempSync(join(tmpdir(), 'thread-start-'));

interface Start {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly selfMs?: number;
}

/** Times `start` (which resolves once the thread has answered) and then stops the thread. */
async function timed(start: () => Promise<{ stop(): Promise<unknown>; selfMs?: number }>) {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const thread = await start();
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  await thread.stop();
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000, selfMs: thread.selfMs };
}

/** Node's floor: a Worker on a file that posts one message and loads nothing. */
function plainWorker(): () => Promise<Start> {
  const file = join(SCRATCH, 'answer.js');
  writeFileSync(file, "require('node:worker_threads').parentPort.postMessage(null);\n");
  return () =>
    timed(async () => {
      const worker = new Worker(file, { execArgv: [] });
      await new Promise((resolve) => worker.once('message', resolve));
      return { stop: () => worker.terminate() };
    });
}

/** Environment without Node's compile cache, or with it in `dir`. */
function envWith(cacheDir?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_DISABLE_COMPILE_CACHE: '1' };
  delete env.NODE_COMPILE_CACHE;
  if (cacheDir === undefined) return env;
  delete env.NODE_DISABLE_COMPILE_CACHE;
  return { ...env, NODE_COMPILE_CACHE: cacheDir };
}

type Options = ConstructorParameters<typeof Piscina>[0];

/** A Piscina thread with `options`, ready once it has answered the pool's warm-up no-op. */
function piscinaThread(options: () => Options): () => Promise<Start> {
  return () =>
    timed(async () => {
      const pool = new Piscina({
        workerData: { taskModules: [], niceIncrement: 0 },
        ...options(),
        // Plain node on the built JavaScript, as in production: not tsx's loader, which
        // this script runs under and a thread would otherwise inherit.
        execArgv: [],
        minThreads: 1,
        maxThreads: 1,
      });
      let selfMs: number | undefined;
      pool.on('message', (message: { threadStartMs?: number }) => {
        selfMs = message.threadStartMs ?? selfMs;
      });
      await pool.run({ task: '', input: {} });
      return { stop: () => pool.destroy(), selfMs };
    });
}

/** The pool's own options from the build, as the service computes them (bundle, cache). */
function productionOptions(niceIncrement: number): Options {
  // Loaded from dist/ (not through tsx) so that it picks the built files as the service does.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { piscinaOptions } = require(join(WORKERS, 'piscina-options.js')) as {
    piscinaOptions: (pool: object, balancer: undefined) => Options;
  };
  const pool = { threads: 1, maxQueue: 1, niceIncrement, taskModules: [] };
  const options = piscinaOptions(pool, undefined);
  if (!options?.filename?.endsWith('thread-bundle.js')) {
    throw new Error('no dist/workers/thread-bundle.js: run `npm run build` first');
  }
  return options;
}

export async function main(): Promise<void> {
  const entry = join(WORKERS, 'thread-entry.js');
  const bundle = join(WORKERS, 'thread-bundle.js');
  if (!existsSync(bundle)) throw new Error('run `npm run build` first');
  const empty = join(SCRATCH, 'empty.js');
  writeFileSync(empty, 'module.exports = () => null;\n');
  // The service's threads use the default cache directory; this one starts empty, and the
  // first (unmeasured) start of each line fills it, as a service's first thread does.
  process.env.NODE_COMPILE_CACHE = join(SCRATCH, 'compile-cache');
  const production = productionOptions(0);
  const niceProduction = productionOptions(19);
  const layers: [string, () => Promise<Start>][] = [
    ['Node Worker, empty file (the floor)', plainWorker()],
    ['+ Piscina, empty module', piscinaThread(() => ({ filename: empty, env: envWith() }))],
    [
      '+ Piscina, empty module, compile cache',
      piscinaThread(() => ({ filename: empty, env: envWith(join(SCRATCH, 'cache-empty')) })),
    ],
    ['thread entry, separate files', piscinaThread(() => ({ filename: entry, env: envWith() }))],
    ['thread entry, one bundle', piscinaThread(() => ({ filename: bundle, env: envWith() }))],
    [
      'separate files + compile cache',
      piscinaThread(() => ({ filename: entry, env: envWith(join(SCRATCH, 'cache-separate')) })),
    ],
    // One options object for every start, as a service's pool has: only its first thread (the
    // unmeasured start below) writes the compile cache.
    ['the pool: bundle + compile cache', piscinaThread(() => production)],
    ['the pool at WORKER_NICE_INCREMENT=19', piscinaThread(() => niceProduction)],
  ];
  for (const [, start] of layers) await start(); // file system and compile caches, once
  const busy = Array.from({ length: BUSY }, () =>
    spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore' }),
  );
  const results = layers.map((): Start[] => []);
  try {
    for (let round = 0; round < RUNS; round++) {
      for (const [i, [, start]] of layers.entries()) results[i]?.push(await start());
    }
  } finally {
    for (const child of busy) child.kill();
  }
  const floor = summarize(results[0]?.map((r) => r.cpuMs) ?? []).p50;
  const floorWall = summarize(results[0]?.map((r) => r.wallMs) ?? []).p50;
  console.log(
    `Node ${process.version}, ${RUNS} rounds, ${BUSY} busy processes, load average ${loadAverage()}: ` +
      'thread start (spawn → ready)',
  );
  console.log(
    '| layer | wall p50 | wall p90 | wall over the floor | CPU p50 | CPU over the floor | self-reported p50 |',
  );
  console.log(
    '| ----- | -------- | -------- | ------------------- | ------- | ------------------ | ----------------- |',
  );
  for (const [i, [label]] of layers.entries()) {
    const runs = results[i] ?? [];
    const wall = runs.map((r) => r.wallMs).sort((a, b) => a - b);
    const cpu = summarize(runs.map((r) => r.cpuMs)).p50;
    const self = runs.flatMap((r) => (r.selfMs === undefined ? [] : [r.selfMs]));
    const reported = self.length === 0 ? '' : `${summarize(self).p50.toFixed(1)} ms`;
    console.log(
      `| ${label} | ${ms(percentile(wall, 50))} | ${ms(percentile(wall, 90))} | ` +
        `${ms(percentile(wall, 50) - floorWall)} | ${ms(cpu)} | ${ms(cpu - floor)} | ${reported} |`,
    );
  }
}

const ms = (value: number): string => `${value.toFixed(1)} ms`;

const loadAverage = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
