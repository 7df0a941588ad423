import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A process under valgrind's callgrind with counting off, for benches that
 * count instructions (`light-instructions.ts`, `job-instructions.ts`): counts
 * that repeated within ~3 % on one machine (ADR 0025), but not on every one
 * (ADR 0034).
 */
export interface Counted {
  readonly child: ChildProcess;
  /** Counts the instructions of every thread while `work` runs; one dump per window. */
  window(work: () => Promise<unknown>): Promise<void>;
  /** The instructions of each window, in order, divided by `per` (once the process is stopped). */
  instructions(per: number): number[];
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
      // One dump per window, in order (callgrind.out.1, .2, …).
      return readdirSync(dir)
        .filter((file) => /\.\d+$/.test(file))
        .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()))
        .map((file) => {
          const summary = /^summary: (\d+)$/m.exec(readFileSync(join(dir, file), 'utf8'));
          return Number(summary?.[1] ?? NaN) / per;
        });
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
