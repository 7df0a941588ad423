/**
 * Instructions per job (submit, claim, run, finish), counted by valgrind's
 * callgrind on one service process (`CLUSTER_PROCESSES=1`), each thread apart:
 * the way to size a change of a few per cent to the jobs path, where CPU
 * times on a shared 2-core machine vary by a quarter between rounds of one
 * build (ADR 0031; its `light` mode does the same for the light route).
 *
 *   npm run build && npm run bench:instructions -- jobs [--before=<checkout>]…
 *
 * Each build runs under callgrind with counting off. After `WARM_JOBS`
 * submissions (the JIT has settled), two windows each count `COUNTED_JOBS`
 * submissions and the runner's work on them (a pause after each lets it finish),
 * divided by the jobs: every thread's, and the event loop's alone. User-space
 * instructions only: the kernel's share (the SQLite file's writes, the
 * threads' wake-ups) is not counted.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { FAULT_TASKS } from '../../test/support/test-config';
import { answering, underCallgrind, type WindowCount } from '../lib/callgrind';
import { fixedAmount } from '../lib/load';
import { forAnyBuild } from '../lib/older-builds';
import { ROOT } from '../lib/servers';
import { fmt } from '../lib/stats';

const WARM_JOBS = 4_000;
const COUNTED_JOBS = 2_000;
const WINDOWS = 2;
const CONNECTIONS = 4;
/** After each window's submissions: the runner finishes the jobs still queued. */
const SETTLE_MS = 3_000;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

const checkouts = [
  ROOT,
  ...process.argv
    .filter((arg) => arg.startsWith('--before='))
    .map((arg) => resolve(arg.slice('--before='.length))),
];

async function count(checkout: string, port: number): Promise<WindowCount[]> {
  const dir = mkdtempSync(join(tmpdir(), 'job-instructions-'));
  const counted = underCallgrind([resolve(checkout, 'dist', 'main.js')], {
    cwd: checkout,
    env: {
      ...process.env,
      ...forAnyBuild({ CLUSTER_PROCESSES: '1' }),
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      PORT: String(port),
      TASK_MODULES: FAULT_TASKS,
      JOBS_SQLITE_PATH: join(dir, 'jobs.sqlite'),
      JOBS_MAX_STORED: '100000',
    },
    label: basename(checkout),
  });
  try {
    const target = {
      url: `http://127.0.0.1:${port}`,
      path: '/api/jobs',
      method: 'POST' as const,
      body: JSON.stringify({ task: 'thread-id', input: {} }),
      contentType: 'application/json',
    };
    await answering(`${target.url}/health/ready`, counted.child);
    await fixedAmount(target, CONNECTIONS, WARM_JOBS);
    for (let window = 0; window < WINDOWS; window++) {
      await sleep(SETTLE_MS);
      await counted.window(async () => {
        await fixedAmount(target, CONNECTIONS, COUNTED_JOBS);
        await sleep(SETTLE_MS);
      });
    }
  } finally {
    counted.child.kill('SIGKILL');
  }
  return counted.instructions(COUNTED_JOBS);
}

export async function main(): Promise<void> {
  const lines = [
    'build | instructions per job, every thread (each window) | on the event loop (each window)',
  ];
  const shown = (counts: number[]) => counts.map((n) => fmt(n)).join(' / ');
  for (const [index, checkout] of checkouts.entries()) {
    const label = checkout === ROOT ? 'this build' : basename(checkout);
    process.stderr.write(`${label}: under callgrind…\n`);
    const windows = await count(checkout, 3_950 + index);
    lines.push(
      `${label} | ${shown(windows.map((window) => window.all))} | ${shown(windows.map((window) => window.main))}`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
