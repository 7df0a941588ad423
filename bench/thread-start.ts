/**
 * How long does a worker thread take to become ready? A pool keeps its size
 * by replacing threads (after a crash, a termination, recycling), and until
 * the replacement has loaded the task code the pool is a thread short.
 *
 * Starts one Piscina thread on the built thread entry (which loads the
 * built-in tasks) and times spawn → first answer (the warm-up the pool itself sends),
 * one thread at a time, on an otherwise idle process. Also reports the
 * process's CPU time per start (the thread's own work dominates it), and the
 * start the thread reports itself (from its spawn to its code loaded, on
 * the clock threads share: what `compute_pool_thread_start_seconds` records).
 *
 * Then the same for a module that loads nothing (Node's and Piscina's own
 * share of a thread start, which no change to corepool can remove).
 *
 *   npm run build && npx tsx bench/thread-start.ts      # RUNS=20 by default
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Piscina } from 'piscina';
import { ROOT } from './lib/servers';
import { percentile, summarize } from './lib/stats';

const RUNS = Number(process.env.RUNS ?? 20);

/** The built thread entry, which loads the built-in tasks itself. */
function builtEntry(): string {
  const entry = ['workers', 'pool']
    .map((dir) => join(ROOT, 'dist', dir, 'thread-entry.js'))
    .find((file) => existsSync(file));
  if (entry === undefined) throw new Error('no dist/*/thread-entry.js: run `npm run build` first');
  return entry;
}

async function startOnce(entry: string) {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const pool = new Piscina({
    filename: entry,
    // Plain node on the built JavaScript, as in production: not tsx's loader, which
    // this script runs under and a thread would otherwise inherit.
    execArgv: [],
    minThreads: 1,
    maxThreads: 1,
    workerData: {
      taskModules: [],
      niceIncrement: 0,
      // Read as the thread is constructed (as the pool's own options do).
      get spawnedAt() {
        return performance.timeOrigin + performance.now();
      },
    },
  });
  let selfMs = Number.NaN;
  pool.on('message', (message: { threadStartMs?: number }) => {
    selfMs = message.threadStartMs ?? selfMs;
  });
  await pool.run({ task: '', input: {} });
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  await pool.destroy();
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000, selfMs };
}

/**
 * The floor: a Piscina thread on a module that exports a no-op and imports
 * nothing, i.e. what Node and Piscina's own worker cost before any task code.
 */
function emptyEntry(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'thread-start-')), 'empty.js');
  writeFileSync(file, 'module.exports = () => null;\n');
  return file;
}

async function measure(label: string, entry: string): Promise<void> {
  await startOnce(entry); // the file system cache, once
  const wall: number[] = [];
  const cpu: number[] = [];
  const self: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const { wallMs, cpuMs, selfMs } = await startOnce(entry);
    wall.push(wallMs);
    cpu.push(cpuMs);
    if (!Number.isNaN(selfMs)) self.push(selfMs);
  }
  const w = summarize(wall);
  const c = summarize(cpu);
  // Builds from before the thread reported its own start have no such number.
  const reported =
    self.length === 0 ? '' : `; as the thread reports it p50 ${summarize(self).p50.toFixed(1)} ms`;
  const p90 = percentile(
    [...wall].sort((a, b) => a - b),
    90,
  );
  console.log(
    `Node ${process.version}: thread start (spawn → ready) over ${RUNS} runs, ` +
      `${label}: wall p50 ${w.p50.toFixed(1)} ms, p90 ${p90.toFixed(1)} ms, max ${w.max.toFixed(1)} ms; ` +
      `process CPU p50 ${c.p50.toFixed(1)} ms${reported}`,
  );
}

async function main(): Promise<void> {
  await measure('built-in tasks', builtEntry());
  await measure('empty module (the floor)', emptyEntry());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
