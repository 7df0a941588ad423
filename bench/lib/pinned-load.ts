/**
 * The light route's capacity, server-bound: the server (every thread of its
 * process) on the last core, the load generator on the first, and a load
 * generator written in C (wrk) that spends a fraction of the server's CPU per
 * request. Sharing both cores with autocannon, a Node process that spends about
 * as much CPU per request as the server, the same bare Fastify ran anywhere
 * from 34,000 to 96,000 requests/s from one round to the next: the rate said as
 * much about where the scheduler put the two processes as about the server
 * (docs/adr/0025-the-light-route-counted-in-instructions.md).
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import type { Throughput } from './load';

const run = promisify(execFile);

/** Why the pinned measurement cannot run here (no wrk, no taskset, one core), or undefined. */
export function pinnedLoadUnavailable(cores: number): string | undefined {
  if (cores < 2) return 'one core: nothing to pin the load generator to';
  for (const tool of ['wrk', 'taskset']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed (Debian: apt-get install ${tool === 'wrk' ? 'wrk' : 'util-linux'})`;
    }
  }
  return undefined;
}

/** Every thread of process `pid` on the given cores (`taskset -a`; threads made later inherit). */
export function pinProcess(pid: number, cores: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cores, String(pid)], { stdio: 'ignore' });
}

/** `connections` requests always in flight for `seconds`, from wrk on core 0. */
export async function pinnedThroughput(
  url: string,
  connections: number,
  seconds: number,
): Promise<Throughput> {
  const { stdout } = await run('taskset', [
    '-c',
    '0',
    'wrk',
    '-t1',
    `-c${connections}`,
    `-d${seconds}s`,
    url,
  ]);
  const count = (pattern: RegExp) => Number(pattern.exec(stdout)?.[1] ?? 0);
  const total = count(/(\d+) requests in/);
  const measuredSeconds = Number(/requests in ([\d.]+)s/.exec(stdout)?.[1] ?? seconds);
  const non2xx = count(/Non-2xx or 3xx responses: (\d+)/);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(
    stdout,
  );
  const errors =
    socketErrors === null ? 0 : socketErrors.slice(1).reduce((a, b) => a + Number(b), 0);
  const ok = total - non2xx;
  return { perSecond: ok / measuredSeconds, ok, non2xx, errors, seconds: measuredSeconds };
}
