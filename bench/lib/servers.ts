import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { freePort } from '../../test/support/free-port';

export const ROOT = resolve(__dirname, '..', '..');
const MAIN = resolve(ROOT, 'dist', 'main.js');
const TSX = require.resolve('tsx/cjs');

/** A server under test: a child process (and, for the cluster, its children). */
export interface Server {
  readonly label: string;
  readonly url: string;
  readonly pid: number;
  /** Resident memory of the process and all its descendants (threads included), in MiB. */
  rssMiB(): number;
  /**
   * CPU time (user + system) used so far by the main thread of the process and of each
   * descendant (the event loops; worker threads excluded), in microseconds.
   */
  mainThreadCpuMicros(): number;
  stop(): Promise<void>;
}

interface Launch {
  readonly label: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  /** Lines on stdout that say one process is ready, and how many there must be. */
  readonly readyLine: RegExp;
  /** 0: nothing to wait for on stdout (the line is not logged at this level). */
  readonly readyCount: number;
}

/** The built service (`dist/main.js`) as production runs it, with these settings. */
export function startService(label: string, env: Record<string, string>): Promise<Server> {
  const processes = Number(env.CLUSTER_WORKERS ?? '1');
  const level = env.LOG_LEVEL ?? 'info';
  return launch({
    label,
    args: [MAIN],
    env: { NODE_ENV: 'production', LOG_LEVEL: 'info', ...env },
    // Nest prints this once per HTTP process, when its threads are warm.
    readyLine: /Nest application successfully started/,
    readyCount: ['info', 'debug', 'trace'].includes(level) ? processes : 0,
  });
}

/** A baseline server from bench/baselines (TypeScript, run through tsx). */
export function startBaseline(
  label: string,
  file: string,
  env: Record<string, string> = {},
): Promise<Server> {
  return launch({
    label,
    args: ['--require', TSX, resolve(ROOT, 'bench', 'baselines', file)],
    env,
    readyLine: /^listening/,
    readyCount: 1,
  });
}

async function launch(options: Launch): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, options.args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so the cluster's processes are stopped with it.
    detached: true,
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${options.label}: could not start`);
  const stderr: string[] = [];
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr.push(chunk);
    if (stderr.length > 50) stderr.shift();
  });
  const url = `http://127.0.0.1:${port}`;
  const server: Server = {
    label: options.label,
    url,
    pid,
    rssMiB: () => sumRssKiB(pid) / 1024,
    mainThreadCpuMicros: () => sumMainThreadCpuMicros(pid),
    stop: () => stopGroup(child),
  };
  try {
    await waitForLines(child, options.readyLine, options.readyCount, 60_000);
    await waitForHttp(`${url}/health/live`, 10_000);
  } catch (error) {
    await server.stop();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${options.label}: ${reason}\n${stderr.join('')}`);
  }
  return server;
}

/** Resolves once `count` stdout lines matched; afterwards stdout is only drained (cheaply). */
function waitForLines(child: ChildProcess, pattern: RegExp, count: number, timeoutMs: number) {
  return new Promise<void>((done, fail) => {
    const stdout = child.stdout;
    if (stdout === null) return fail(new Error('no stdout'));
    if (count === 0) {
      stdout.resume();
      return done();
    }
    let seen = 0;
    let buffered = '';
    const finish = (error?: Error) => {
      clearTimeout(timer);
      stdout.off('data', onData);
      child.off('exit', onExit);
      stdout.resume();
      if (error === undefined) done();
      else fail(error);
    };
    const onData = (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      seen += lines.filter((line) => pattern.test(line)).length;
      if (seen >= count) finish();
    };
    const onExit = (code: number | null) => finish(new Error(`exited with ${code} while starting`));
    const timer = setTimeout(
      () => finish(new Error(`${seen}/${count} processes ready after ${timeoutMs} ms`)),
      timeoutMs,
    );
    stdout.setEncoding('utf8').on('data', onData);
    child.once('exit', onExit);
  });
}

async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > until) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** SIGTERM to the whole group, SIGKILL if anything is left after 15 s; resolves when all are gone. */
async function stopGroup(child: ChildProcess): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  signalGroup(pid, 'SIGTERM');
  const until = Date.now() + 15_000;
  while (groupAlive(pid)) {
    if (Date.now() > until) signalGroup(pid, 'SIGKILL');
    await new Promise((done) => setTimeout(done, 50));
  }
  if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `pid` and every process descended from it, from /proc (Linux). */
function familyOf(pid: number): Set<number> {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name in parentheses may contain spaces; the ppid follows the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // exited while we looked
    }
  }
  const family = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [child, parent] of parents) {
      if (family.has(parent) && !family.has(child)) {
        family.add(child);
        grew = true;
      }
    }
  }
  return family;
}

/** VmRSS of `pid` and every descendant, from /proc (Linux). */
export function sumRssKiB(pid: number): number {
  let total = 0;
  for (const member of familyOf(pid)) {
    try {
      const status = readFileSync(`/proc/${member}/status`, 'utf8');
      total += Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? 0);
    } catch {
      // exited while we looked
    }
  }
  return total;
}

/** Clock ticks per second of /proc's CPU times (100 on most Linux systems). */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * utime + stime of the main thread (its task id is the process id) of `pid` and of every
 * descendant, from /proc/<pid>/task/<pid>/stat (Linux), in microseconds. Worker threads are
 * other tasks of the process and are not counted: this is the event loops' own CPU.
 */
export function sumMainThreadCpuMicros(pid: number): number {
  let ticks = 0;
  for (const member of familyOf(pid)) {
    try {
      const stat = readFileSync(`/proc/${member}/task/${member}/stat`, 'utf8');
      // Fields after the command name (which may contain spaces): state is field 3, utime 14, stime 15.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited while we looked
    }
  }
  return (ticks * 1e6) / CLOCK_TICKS;
}
