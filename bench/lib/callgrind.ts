import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A process under valgrind's callgrind with counting off, for benches that
 * count instructions (`light-instructions.ts`, `job-instructions.ts`). Each
 * thread is counted apart: the main thread's count repeated within 2–4 % from
 * window to window where the whole process's moved by 20–30 %, because V8's
 * helper threads (concurrent marking and sweeping, compilation) ran in some
 * windows and not in others (ADR 0025's amendment).
 */
export interface Counted {
  readonly child: ChildProcess;
  /** Counts the instructions of every thread while `work` runs; one dump per window. */
  window(work: () => Promise<unknown>): Promise<void>;
  /** Each window's instructions, in order, divided by `per` (once the process is stopped). */
  instructions(per: number): WindowCount[];
}

export interface WindowCount {
  /** The main thread: the event loop, and what V8 does on it (scavenges included). */
  readonly main: number;
  /** Every thread of the process. */
  readonly all: number;
}

export function underCallgrind(
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; label: string },
): Counted {
  const dir = mkdtempSync(join(tmpdir(), `instructions-${options.label}-`));
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      '--separate-threads=yes',
      '--smc-check=all-non-file',
      `--callgrind-out-file=${join(dir, 'callgrind.out')}`,
      process.execPath,
      ...args,
    ],
    { cwd: options.cwd, env: options.env, stdio: 'ignore' },
  );
  const control = (...command: string[]) =>
    execFileSync('callgrind_control', [...command, String(child.pid)], { stdio: 'ignore' });
  return {
    child,
    async window(work) {
      control('-z');
      control('-i', 'on');
      await work();
      control('-d');
      control('-i', 'off');
    },
    instructions(per) {
      // One file per window and thread: callgrind.out.<window>-<thread>, the main thread 01.
      const windows = new Map<number, { main: number; all: number }>();
      for (const file of readdirSync(dir)) {
        const match = /\.(\d+)-(\d+)$/.exec(file);
        if (match === null) continue;
        const summary = /^summary: (\d+)$/m.exec(readFileSync(join(dir, file), 'utf8'));
        const count = Number(summary?.[1] ?? NaN) / per;
        const window = windows.get(Number(match[1])) ?? { main: 0, all: 0 };
        if (Number(match[2]) === 1) window.main += count;
        window.all += count;
        windows.set(Number(match[1]), window);
      }
      return [...windows.entries()].sort(([a], [b]) => a - b).map(([, window]) => window);
    },
  };
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Resolves once `url` answers 2xx; valgrind makes a start slow. */
export async function answering(url: string, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // Not listening yet.
    }
    await sleep(1_000);
  }
  throw new Error(`${url} never answered`);
}
