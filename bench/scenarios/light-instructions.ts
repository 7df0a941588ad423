/**
 * Instructions per light request (`GET /health/live`), or per tiny task with
 * `--tiny` (`compute`, 100 iterations), counted by valgrind's callgrind: the
 * same count run after run, whatever else the machine does, where times on a
 * shared 2-core machine vary by a third (ADR 0025).
 *
 *   npm run build && npm run bench:instructions -- light [--tiny] [--before=<checkout>] \
 *     [--variant=NAME=VALUE,…]
 *
 * Each server runs under callgrind with counting off. After 40,000 requests
 * (the JIT has settled), five windows of 10,000 are counted, each thread
 * apart, and divided by the requests: user-space instructions only (the
 * kernel's share of a request, the same for every server, is not counted).
 * The count is the main thread's, the event loop's own work, median over the
 * windows; it repeated within 2–4 %. Every thread's count is printed beside
 * it: that one moved by 20–30 % from window to window (by half in ADR 0034's
 * runs), with V8's helper threads (concurrent marking, compilation) in some
 * windows and not in others (ADR 0025's amendment). Compare builds within one
 * run, and read the windows before the ratio.
 *
 * `--skip=<key>` leaves a server out (e.g. `--skip=nest` when comparing builds);
 * each `--variant` adds this build with those settings (`variant`, `variant2`…),
 * e.g. tracing off, at 1 % and at 100 % (ADR 0048). Tiny tasks count fewer
 * requests: their threads run under callgrind too, serialized with the main one.
 */
import { basename, resolve } from 'node:path';
import { answering, underCallgrind, type WindowCount } from '../lib/callgrind';
import { fixedAmount, type Target } from '../lib/load';
import { forAnyBuild } from '../lib/older-builds';
import { ROOT } from '../lib/servers';
import { variantsOf } from '../lib/variants';
import { fmt, median } from '../lib/stats';

const tiny = process.argv.includes('--tiny');
const WARM_REQUESTS = tiny ? 15_000 : 40_000;
const COUNTED_REQUESTS = tiny ? 3_000 : 10_000;
const WINDOWS = 5;
const CONNECTIONS = 8;
/** The hot-path bench's tiny task (`bench/run.ts`). */
const TINY_TASK = {
  path: '/api/tasks/compute',
  method: 'POST',
  body: JSON.stringify({ iterations: 100, payloadSize: 100 }),
  contentType: 'application/json',
} as const;
const TSX = require.resolve('tsx/cjs');

interface Subject {
  readonly key: string;
  readonly cwd: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
}

const baseline = (key: string, file: string, env: Record<string, string> = {}): Subject => ({
  key,
  cwd: ROOT,
  args: ['--require', TSX, resolve(ROOT, 'bench', 'baselines', file)],
  env: { TSX_TSCONFIG_PATH: resolve(ROOT, 'tsconfig.json'), ...env },
});
const service = (key: string, checkout: string, env: Record<string, string> = {}): Subject => ({
  key,
  cwd: checkout,
  args: [resolve(checkout, 'dist', 'main.js')],
  env: forAnyBuild({ CLUSTER_PROCESSES: '1', NODE_ENV: 'production', LOG_LEVEL: 'info', ...env }),
});

const skipped = new Set(
  process.argv.filter((arg) => arg.startsWith('--skip=')).map((arg) => arg.slice('--skip='.length)),
);
const SUBJECTS: readonly Subject[] = [
  baseline('bare', 'bare-fastify.ts'),
  baseline('nest', 'nest-minimal.ts', { POOL_THREADS: '2' }),
  service('pool', ROOT),
  ...variantsOf(process.argv).map(({ key, env }) => service(key, ROOT, env)),
  ...process.argv
    .filter((arg) => arg.startsWith('--before='))
    .map((arg) => resolve(arg.slice('--before='.length)))
    .map((checkout) => service(basename(checkout), checkout)),
]
  // Bare Fastify has no task route.
  .filter((subject) => !skipped.has(subject.key) && !(tiny && subject.key === 'bare'));

async function count(subject: Subject, port: number): Promise<WindowCount[]> {
  const counted = underCallgrind(subject.args, {
    cwd: subject.cwd,
    env: { ...process.env, ...subject.env, PORT: String(port) },
    label: subject.key,
  });
  try {
    const url = `http://127.0.0.1:${port}`;
    await answering(`${url}/health/live`, counted.child);
    const target: Target = tiny ? { url, ...TINY_TASK } : { url, path: '/health/live' };
    await fixedAmount(target, CONNECTIONS, WARM_REQUESTS);
    for (let window = 0; window < WINDOWS; window++) {
      await counted.window(() => fixedAmount(target, CONNECTIONS, COUNTED_REQUESTS));
    }
  } finally {
    counted.child.kill('SIGKILL');
  }
  return counted.instructions(COUNTED_REQUESTS);
}

export async function main(): Promise<void> {
  const lines = [
    `server | main-thread instructions per ${tiny ? 'tiny task' : 'light request'} (each window) | median | ÷ ${SUBJECTS[0]?.key ?? '–'} | every thread: median (lowest–highest)`,
  ];
  let first: number | undefined;
  for (const [index, subject] of SUBJECTS.entries()) {
    process.stderr.write(`${subject.key}: under callgrind…\n`);
    const windows = await count(subject, 3_900 + index);
    const mainThread = windows.map((window) => window.main);
    const everyThread = windows.map((window) => window.all);
    const typical = median(mainThread);
    first ??= typical;
    lines.push(
      `${subject.key} | ${mainThread.map((n) => fmt(n)).join(' / ')} | ${fmt(typical)} | ` +
        `${(typical / first).toFixed(2)} | ${fmt(median(everyThread))} ` +
        `(${fmt(Math.min(...everyThread))}–${fmt(Math.max(...everyThread))})`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
