import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import type { OpenLoopOptions, OpenLoopResult } from './open-loop-client';

export type { OpenLoopOptions, OpenLoopResult } from './open-loop-client';

const TSX = require.resolve('tsx/cjs');
const CLIENT = resolve(__dirname, 'open-loop-client.ts');

/**
 * Runs the light open-loop generator (`open-loop-client.ts`) in a process of
 * its own, so that neither its work nor the bench's (`fetch`, JSON, GC) lands
 * in the latencies (ADR 0024).
 */
export function openLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--require', TSX, CLIENT, JSON.stringify(options)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.once('exit', (code) => {
      try {
        done(JSON.parse(out) as OpenLoopResult);
      } catch {
        fail(new Error(`the load generator exited ${code} without a result`));
      }
    });
  });
}
