/**
 * Instructions per light request (`GET /health/live`), counted by valgrind's
 * callgrind: the same count run after run, whatever else the machine does,
 * where times on a shared 2-core machine vary by a third (ADR 0025).
 *
 *   npm run build && npx tsx bench/light-instructions.ts [--before=<checkout>]
 *
 * Each server runs under callgrind with counting off. After 40,000 requests
 * (the JIT has settled), two windows of 20,000 are counted: the user-space
 * instructions of every thread of the process (the kernel's share of a request,
 * the same for every server, is not counted), divided by the requests.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fixedAmount } from './lib/load';
import { ROOT } from './lib/servers';

const WARM_REQUESTS = 40_000;
const COUNTED_REQUESTS = 20_000;
const WINDOWS = 2;
const CONNECTIONS = 8;
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
const service = (key: string, checkout: string): Subject => ({
  key,
  cwd: checkout,
  args: [resolve(checkout, 'dist', 'main.js')],
  env: { CLUSTER_WORKERS: '1', NODE_ENV: 'production', LOG_LEVEL: 'info' },
});

const SUBJECTS: readonly Subject[] = [
  baseline('bare', 'bare-fastify.ts'),
  baseline('nest', 'nest-minimal.ts', { POOL_THREADS: '2' }),
  service('pool', ROOT),
  ...process.argv
    .filter((arg) => arg.startsWith('--before='))
    .map((arg) => resolve(arg.slice('--before='.length)))
    .map((checkout) => service(basename(checkout), checkout)),
];

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function answering(url: string, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // Not listening yet: valgrind makes the start slow.
    }
    await sleep(1_000);
  }
  throw new Error(`${url} never answered`);
}

const callgrind = (pid: number, ...command: string[]) =>
  execFileSync('callgrind_control', [...command, String(pid)], { stdio: 'ignore' });

async function count(subject: Subject, port: number): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), `instructions-${subject.key}-`));
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      '--smc-check=all-non-file',
      `--callgrind-out-file=${join(dir, 'callgrind.out')}`,
      process.execPath,
      ...subject.args,
    ],
    {
      cwd: subject.cwd,
      env: { ...process.env, ...subject.env, PORT: String(port) },
      stdio: 'ignore',
    },
  );
  try {
    const target = { url: `http://127.0.0.1:${port}`, path: '/health/live' };
    await answering(`${target.url}${target.path}`, child);
    await fixedAmount(target, CONNECTIONS, WARM_REQUESTS);
    for (let window = 0; window < WINDOWS; window++) {
      callgrind(child.pid!, '-z');
      callgrind(child.pid!, '-i', 'on');
      await fixedAmount(target, CONNECTIONS, COUNTED_REQUESTS);
      callgrind(child.pid!, '-d');
      callgrind(child.pid!, '-i', 'off');
    }
  } finally {
    child.kill('SIGKILL');
  }
  // One dump per window, in order (callgrind.out.1, .2, …).
  return readdirSync(dir)
    .filter((file) => /\.\d+$/.test(file))
    .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()))
    .map((file) => {
      const summary = /^summary: (\d+)$/m.exec(readFileSync(join(dir, file), 'utf8'));
      return Number(summary?.[1] ?? NaN) / COUNTED_REQUESTS;
    });
}

async function main(): Promise<void> {
  const lines = ['server | instructions per light request (each window) | ÷ bare'];
  let bare: number | undefined;
  for (const [index, subject] of SUBJECTS.entries()) {
    process.stderr.write(`${subject.key}: under callgrind…\n`);
    const windows = await count(subject, 3_900 + index);
    const last = windows.at(-1) ?? NaN;
    bare ??= last;
    lines.push(
      `${subject.key} | ${windows.map((n) => Math.round(n).toLocaleString('en')).join(' / ')} | ${(last / bare).toFixed(2)}`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
