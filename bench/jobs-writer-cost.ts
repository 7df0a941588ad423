/**
 * What the SQLite writes cost the event loop (ADR 0022), in one process, no
 * HTTP: the group commit on the event loop (`SqliteJobWriter`) beside the
 * same group commit on a thread (`SqliteWriteThread`). Each job is one
 * submission (with the claim it asks for), then its end (with the next
 * claim), `--per-turn` jobs per turn of the event loop, as a process sees
 * them at 500 submissions/s. Reported: the event loop's own CPU per job
 * (`process.threadCpuUsage`, so other processes on the machine do not count),
 * the whole process's CPU per job (what the thread adds), and how long a submission waits for its answer. Modes alternate, in
 * reverse order every other round.
 *
 *   npx tsx bench/jobs-writer-cost.ts --jobs 3000 --rounds 3
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { SqliteJobStore, type SqliteStoreOptions } from '../src/jobs/sqlite/sqlite-job-store';
import { SqliteJobWriter } from '../src/jobs/sqlite/sqlite-job-writer';
import { SqliteWriteThread } from '../src/jobs/sqlite/sqlite-write-thread';
import type { SqliteWrites } from '../src/jobs/sqlite/sqlite-writes';
import { fmt, summarize } from './lib/stats';
import { TINY_ENDING, TINY_PAYLOAD } from './lib/tiny-job';

const { values: args } = parseArgs({
  options: {
    jobs: { type: 'string', default: '3000' },
    'per-turn': { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
  },
});
const JOBS = Number(args.jobs);
const PER_TURN = Number(args['per-turn']);

const modes: Record<string, (options: SqliteStoreOptions) => SqliteWrites> = {
  'event loop': (options) =>
    new SqliteJobWriter(new SqliteJobStore({ ...options, busyTimeoutMs: 0 })),
  thread: (options) => new SqliteWriteThread(options),
};

async function run(make: (options: SqliteStoreOptions) => SqliteWrites) {
  const dir = mkdtempSync(join(tmpdir(), 'corepool-writer-cost-'));
  const writes = make({
    path: join(dir, 'jobs.sqlite'),
    maxStored: 100_000,
    maxStoredBytes: 1_073_741_824,
    resultTtlSeconds: 3600,
    attempts: 3,
    backoffMs: 1000,
  });
  await writes.call('totals', []); // the file, its tables and (for the thread) the thread are up
  const waits: number[] = [];
  const cpuBefore = process.threadCpuUsage();
  const processBefore = process.cpuUsage();
  const started = performance.now();
  for (let done = 0; done < JOBS; done += PER_TURN) {
    const turn = Array.from({ length: PER_TURN }, async () => {
      const asked = performance.now();
      await writes.call('insert', [TINY_PAYLOAD, 'bench', undefined]);
      waits.push(performance.now() - asked);
      const claimed = await writes.call('claimRunnable', ['bench', 1, 30_000], { last: true });
      for (const job of claimed) {
        await writes.call('finish', [job.id, 'bench', TINY_ENDING]);
      }
    });
    await Promise.all(turn);
  }
  const cpu = process.threadCpuUsage(cpuBefore);
  const all = process.cpuUsage(processBefore);
  const wallMs = performance.now() - started;
  await writes.close();
  rmSync(dir, { recursive: true, force: true });
  return {
    cpuUsPerJob: (cpu.user + cpu.system) / JOBS,
    processUsPerJob: (all.user + all.system) / JOBS,
    wallMs,
    wait: summarize(waits),
  };
}

async function main(): Promise<void> {
  const names = Object.keys(modes);
  for (let round = 0; round < Number(args.rounds); round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      const r = await run(modes[name] as (options: SqliteStoreOptions) => SqliteWrites);
      process.stdout.write(
        `${name.padEnd(11)} round ${round}: event-loop CPU ${fmt(r.cpuUsPerJob, 0)} µs/job ` +
          `(process, every thread: ${fmt(r.processUsPerJob, 0)}) | ` +
          `submission answered p50 ${fmt(r.wait.p50, 2)} p99 ${fmt(r.wait.p99, 2)} ms | ` +
          `${fmt((JOBS / r.wallMs) * 1000)} jobs/s | load ${fmt(loadavg()[0] ?? 0, 2)}\n`,
      );
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
