import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { freePort } from './free-port';
import { FAULT_TASKS } from './test-config';

export { freePort };

const MAIN = resolve(__dirname, '../../dist/main.js');

export interface ServiceProcess {
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** Every line the service printed so far (stdout and stderr). */
  readonly lines: string[];
  /** Resolves with how the process ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first printed line that matches. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Starts the built service (`dist/main.js`, as production does) as a real
 * child process on a free loopback port, and waits until `readyPath` answers 200
 * (`readyPath: null` does not wait, for a service expected to fail).
 * The fault tasks are loaded too, unless `TASK_MODULES` is overridden.
 */
export async function startService(
  env: Record<string, string> = {},
  {
    readyPath = '/health/live',
    timeoutMs = 30_000,
    cwd,
  }: {
    readyPath?: string | null;
    timeoutMs?: number;
    /** Run `dist/main.js` of this directory instead of the repository's. */
    cwd?: string;
  } = {},
): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, cwd === undefined ? [MAIN] : ['dist/main.js'], {
    cwd,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
      TASK_MODULES: FAULT_TASKS,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  for (const stream of [child.stdout, child.stderr]) {
    let buffered = '';
    stream?.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        for (const listener of listeners) listener(line);
      }
    });
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  const url = `http://127.0.0.1:${port}`;

  const waitForLine = (pattern: RegExp, waitMs = 10_000) =>
    new Promise<string>((done, fail) => {
      const seen = lines.find((line) => pattern.test(line));
      if (seen !== undefined) return done(seen);
      const timer = setTimeout(() => {
        listeners.delete(listener);
        fail(new Error(`no line matching ${pattern} within ${waitMs} ms`));
      }, waitMs);
      const listener = (line: string) => {
        if (!pattern.test(line)) return;
        clearTimeout(timer);
        listeners.delete(listener);
        done(line);
      };
      listeners.add(listener);
    });

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await exited;
  };

  const until = Date.now() + timeoutMs;
  for (; readyPath !== null;) {
    if (child.exitCode !== null) {
      throw new Error(
        `service exited with ${child.exitCode} before it was ready:\n${lines.join('\n')}`,
      );
    }
    try {
      if ((await fetch(`${url}${readyPath}`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > until) {
      await stop();
      throw new Error(`service not ready within ${timeoutMs} ms:\n${lines.join('\n')}`);
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  return { url, port, child, lines, exited, waitForLine, stop };
}
