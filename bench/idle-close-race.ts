/**
 * The idle-close race (docs/lifecycle.md): keep-alive clients send requests with a short
 * think time between them while the server drains. Closing every idle connection at
 * once (what the drain did before) resets requests that were already on their way;
 * closing only connections idle for a settle time, and answering the rest with
 * `Connection: close`, should not.
 *
 *   npx tsx bench/idle-close-race.ts [--rounds 5]
 *
 * In one process, over loopback, with the service's own ConnectionTracker; no Nest.
 */
import { Agent, createServer, request } from 'node:http';
import { Server as NetServer, type AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { ConnectionTracker } from '../src/lifecycle/connection-tracker';
import { IDLE_SETTLE_MS } from '../src/lifecycle/shutdown.service';

const CONNECTIONS = 32;
const THINK_TIMES_MS = [1, 10, 100];
const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One drain under load; resolves with the clients' outcomes counted by label. */
async function round(atOnce: boolean, thinkMs: number): Promise<Record<string, number>> {
  const tracker = new ConnectionTracker();
  let draining = false;
  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    tracker.begin(req, res);
    req.resume();
    req.on('end', () => {
      if (draining) res.setHeader('connection', 'close');
      res.end('ok');
    });
  });
  server.on('connection', (socket) => tracker.opened(socket));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;

  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const counts: Record<string, number> = {};
  let stopped = false;
  const send = () =>
    new Promise<string>((done) => {
      const req = request({ port, host: '127.0.0.1', agent, method: 'POST', path: '/' }, (res) => {
        res.resume();
        res.on('end', () => done('ok'));
      });
      req.on('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
      req.end('x');
    });
  const client = async () => {
    while (!stopped) {
      const outcome = await send();
      counts[outcome] = (counts[outcome] ?? 0) + 1;
      await sleep(Math.random() * thinkMs);
    }
  };
  const clients = Array.from({ length: CONNECTIONS }, client);

  await sleep(300);
  // The drain: stop listening, answer with Connection: close, close what has settled.
  draining = true;
  NetServer.prototype.close.call(server);
  // Before: every idle connection closed the moment the drain began.
  if (atOnce) tracker.closeSettled(0);
  await tracker.whenClosed(IDLE_SETTLE_MS, 5_000);
  stopped = true;
  await Promise.all(clients);
  agent.destroy();
  server.closeAllConnections();
  return counts;
}

async function main(): Promise<void> {
  const rounds = Number(args.rounds);
  console.log(`${CONNECTIONS} keep-alive clients, ${rounds} drains per row`);
  console.log(
    '| idle connections closed | think time | requests | reset (lost) | refused (never accepted) |',
  );
  console.log('|---|---|---|---|---|');
  for (const thinkMs of THINK_TIMES_MS) {
    for (const atOnce of [true, false]) {
      const total: Record<string, number> = {};
      for (let i = 0; i < rounds; i++) {
        for (const [outcome, n] of Object.entries(await round(atOnce, thinkMs))) {
          total[outcome] = (total[outcome] ?? 0) + n;
        }
      }
      const all = Object.values(total).reduce((sum, n) => sum + n, 0);
      const refused = total.ECONNREFUSED ?? 0;
      const lost = all - (total.ok ?? 0) - refused;
      console.log(
        `| ${atOnce ? 'at once' : `after ${IDLE_SETTLE_MS} ms idle`} | 0–${thinkMs} ms | ${all} | ${lost} | ${refused} |` +
          (lost > 0 ? ` ${JSON.stringify(total)}` : ''),
      );
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
