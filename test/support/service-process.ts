import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './free-port';
import { sumRssKiB } from './process-tree';
import { FAULT_TASKS } from './test-config';

export { freePort };

/** The built service, as production runs it. */
export const BUILT_MAIN = resolve(__dirname, '../../dist/main.js');

/**
 * A real process serving HTTP on a free loopback port: the built service (or,
 * for the bench, a baseline server). The one launcher of tests and bench.
 */
export interface ServiceProcess {
  readonly label: string;
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  readonly child: ChildProcess;
  /** The lines the process printed so far (stdout and stderr). */
  readonly lines: string[];
  /** Resolves with how the process ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first printed line that matches (among the kept ones, or a later one). */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGKILL to its whole process group (a cluster's processes too); resolves once it exited. */
  stop(): Promise<void>;
  /** SIGTERM to the group, SIGKILL to what is left after `graceMs`; resolves once all are gone. */
  shutdown(graceMs?: number): Promise<void>;
  /** Resident memory of the process and all its descendants, in MiB (Linux). */
  rssMiB(): number;
}

export interface LaunchOptions {
  /** Names the process in errors. */
  readonly label?: string;
  /** The node arguments: the built service by default. */
  readonly args?: readonly string[];
  /** Beside PATH and HOST (loopback); PORT is always the free port found. */
  readonly env?: Record<string, string | undefined>;
  /** Answers 200 once the process is ready; null: do not wait (a process expected to fail). */
  readonly readyPath?: string | null;
  /** Also wait for this many printed lines matching the pattern (e.g. one per cluster process). */
  readonly readyLines?: { readonly pattern: RegExp; readonly count: number };
  readonly timeoutMs?: number;
  readonly cwd?: string;
  /**
   * Stop reading what it prints once it is ready: a bench drives hundreds of
   * thousands of logged requests, and splitting their lines would load the
   * process that measures.
   */
  readonly discardOutputAfterReady?: boolean;
}

/**
 * Starts a real process on a free loopback port in its own process group, and
 * waits until it is ready. A process that exits or is not ready in time is
 * stopped and the error carries what it printed.
 */
export async function launchProcess(options: LaunchOptions = {}): Promise<ServiceProcess> {
  const {
    label = 'service',
    // Another checkout's build when `cwd` names one.
    args = [options.cwd === undefined ? BUILT_MAIN : 'dist/main.js'],
    readyPath = '/health/live',
    readyLines,
    timeoutMs = 30_000,
  } = options;
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd: options.cwd,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', ...options.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so that stopping it stops a cluster's processes with it.
    detached: true,
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${label}: could not start`);

  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  const readers = [child.stdout, child.stderr].map((stream) => {
    let buffered = '';
    const read = (chunk: string) => {
      buffered += chunk;
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        for (const listener of listeners) listener(line);
      }
    };
    stream?.setEncoding('utf8').on('data', read);
    return () => stream?.off('data', read).resume();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  const hasExited = () => child.exitCode !== null || child.signalCode !== null;

  const waitForLine = (pattern: RegExp, waitMs = 10_000) =>
    new Promise<string>((done, fail) => {
      const seen = lines.find((line) => pattern.test(line));
      if (seen !== undefined) return done(seen);
      const timer = setTimeout(() => {
        listeners.delete(listener);
        fail(new Error(`${label}: no line matching ${pattern} within ${waitMs} ms`));
      }, waitMs);
      const listener = (line: string) => {
        if (!pattern.test(line)) return;
        clearTimeout(timer);
        listeners.delete(listener);
        done(line);
      };
      listeners.add(listener);
    });

  const stopGroup = async (graceMs: number) => {
    signalGroup(pid, graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
    const killAt = Date.now() + graceMs;
    while (groupAlive(pid)) {
      if (Date.now() > killAt) signalGroup(pid, 'SIGKILL');
      await new Promise((done) => setTimeout(done, 50));
    }
    if (!hasExited()) await exited;
  };

  const url = `http://127.0.0.1:${port}`;
  const service: ServiceProcess = {
    label,
    url,
    port,
    pid,
    child,
    lines,
    exited,
    waitForLine,
    stop: () => stopGroup(0),
    shutdown: (graceMs = 15_000) => stopGroup(graceMs),
    rssMiB: () => sumRssKiB(pid) / 1024,
  };

  const until = Date.now() + timeoutMs;
  try {
    const linesSeen = readyLines === undefined ? undefined : countLines(readyLines, timeoutMs);
    for (; readyPath !== null;) {
      if (hasExited()) throw new Error(`exited with ${child.exitCode} before it was ready`);
      if (await answers200(`${url}${readyPath}`)) break;
      if (Date.now() > until) throw new Error(`not ready within ${timeoutMs} ms`);
      await new Promise((done) => setTimeout(done, 50));
    }
    await linesSeen;
    if (options.discardOutputAfterReady === true) for (const discard of readers) discard();
  } catch (error) {
    await service.stop();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${label}: ${reason}:\n${lines.join('\n')}`, { cause: error });
  }
  return service;

  function countLines({ pattern, count }: { pattern: RegExp; count: number }, waitMs: number) {
    return new Promise<void>((done, fail) => {
      let seen = lines.filter((line) => pattern.test(line)).length;
      if (seen >= count) return done();
      const timer = setTimeout(() => {
        listeners.delete(listener);
        fail(new Error(`${seen}/${count} lines matching ${pattern} after ${waitMs} ms`));
      }, waitMs);
      const listener = (line: string) => {
        if (!pattern.test(line) || ++seen < count) return;
        clearTimeout(timer);
        listeners.delete(listener);
        done();
      };
      listeners.add(listener);
    });
  }
}

/** A job store file of its own (in a fresh temporary directory), so tests never share one. */
export const freshJobsPath = () =>
  join(mkdtempSync(join(tmpdir(), 'corepool-jobs-')), 'jobs.sqlite');

/**
 * The built service (`dist/main.js`) as production runs it, for a test: the
 * fault tasks are loaded too, unless `TASK_MODULES` is overridden, and its
 * SQLite job store is a fresh file unless `JOBS_SQLITE_PATH` names one (to
 * share it, or to find it again after a restart).
 */
export function startService(
  env: Record<string, string> = {},
  options: Omit<LaunchOptions, 'env' | 'args'> = {},
): Promise<ServiceProcess> {
  return launchProcess({
    ...options,
    env: {
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      TASK_MODULES: FAULT_TASKS,
      // Tests ask the operator routes faster than an operator would and expect fresh answers:
      // the per-client limit and the health cache are tested where they are the subject.
      OPERATOR_REQUESTS_PER_SECOND: '0',
      HEALTH_CACHE_MS: '0',
      JOBS_SQLITE_PATH: freshJobsPath(),
      ...env,
    },
  });
}

async function answers200(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).status === 200;
  } catch {
    return false; // not listening yet
  }
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
