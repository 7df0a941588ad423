/**
 * The kill -9 hang (ADR 0010): clients that open a new connection for every
 * request, as fast as they are answered, against a 2-process cluster; one
 * process is killed with -9, three times (each respawned in between). Counted:
 * requests that failed at once (in flight on the killed process) and requests
 * that got no answer at all within 8 s — a connection handed to a dead process.
 *
 *   npm run build && npx tsx bench/kill-hang.ts --policy round-robin
 *   npx tsx bench/kill-hang.ts --policy kernel
 */
import { request } from 'node:http';
import { parseArgs } from 'node:util';
import { startService, type ServiceProcess } from '../test/support/service-process';

const CLIENTS = 32;
const HANG_MS = 8_000;
const KILLS = 3;

const { values: args } = parseArgs({
  options: { policy: { type: 'string', default: 'kernel' } },
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const readyPids = (service: ServiceProcess) =>
  service.lines.flatMap((line) => {
    const match = /"msg":"process (\d+) ready"/.exec(line);
    return match === null ? [] : [Number(match[1])];
  });

/** One GET on a connection of its own; resolves with `ok`, the error's code, or `no answer`. */
function probe(url: string): Promise<string> {
  return new Promise((done) => {
    const req = request(`${url}/health/live`, { agent: false }, (response) => {
      response.resume();
      response.on('end', () =>
        finish(response.statusCode === 200 ? 'ok' : `HTTP ${response.statusCode}`),
      );
    });
    const timer = setTimeout(() => {
      finish('no answer');
      req.destroy();
    }, HANG_MS);
    let settled = false;
    const finish = (outcome: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      done(outcome);
    };
    req.on('error', (error: NodeJS.ErrnoException) => finish(error.code ?? error.message));
    req.end();
  });
}

async function main(): Promise<void> {
  const service = await startService(
    { CLUSTER_WORKERS: '2', POOL_THREADS: '1', CLUSTER_SCHEDULING_POLICY: args.policy },
    { readyPath: '/health/ready', timeoutMs: 60_000 },
  );
  const counts: Record<string, number> = {};
  let stopped = false;
  const client = async () => {
    while (!stopped) {
      const outcome = await probe(service.url);
      counts[outcome] = (counts[outcome] ?? 0) + 1;
    }
  };
  try {
    const clients = Array.from({ length: CLIENTS }, client);
    const killed = new Set<number>();
    for (let kill = 0; kill < KILLS; kill++) {
      while (readyPids(service).length < 2 + kill) await sleep(50);
      await sleep(1_000);
      const victim = readyPids(service).find((pid) => !killed.has(pid))!;
      killed.add(victim);
      process.kill(victim, 'SIGKILL');
    }
    while (readyPids(service).length < 2 + KILLS) await sleep(50);
    // Long enough for a hung request to be counted as one.
    await sleep(HANG_MS + 1_000);
    stopped = true;
    await Promise.all(clients);
    console.log(`policy ${args.policy}: ${KILLS} kills; outcomes ${JSON.stringify(counts)}`);
  } finally {
    await service.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
