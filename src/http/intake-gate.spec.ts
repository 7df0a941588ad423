import { Agent, createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IntakeGate } from './intake-gate';

/** A real server whose answers the test sends, gated; what it read, in order. */
async function gatedServer(maxInProgress: number, loop: { value: number }) {
  const read: string[] = [];
  const pending = new Map<string, ServerResponse>();
  const server: Server = createServer((req, res) => {
    read.push(req.url!);
    if (req.url!.startsWith('/health/')) res.end('ok');
    else pending.set(req.url!, res);
  });
  const gate = new IntakeGate({ maxInProgress, loopUtilization: 0.9 }, loop);
  gate.bind(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    gate,
    read,
    answer(url: string) {
      pending.get(url)!.end(url);
      pending.delete(url);
    },
    close: () => new Promise((done) => server.close(done)),
    port,
  };
}

/** A keep-alive client of one connection. */
function client(port: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return {
    get: (path: string) =>
      new Promise<string>((done, fail) => {
        request({ port, host: '127.0.0.1', path, agent }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => done(body));
        })
          .on('error', fail)
          .end();
      }),
    close: () => agent.destroy(),
  };
}

const until = async (check: () => boolean) => {
  while (!check()) await new Promise((done) => setTimeout(done, 5));
};
const settle = () => new Promise((done) => setTimeout(done, 150));

type GatedServer = Awaited<ReturnType<typeof gatedServer>>;
type Client = ReturnType<typeof client>;

/**
 * A gated server (bound 1) and two keep-alive clients, a and b, each with a request in
 * progress; a's has been answered, and a's next one sent: what the test then sees.
 */
async function afterOneAnswer(
  loop: { value: number },
  check: (server: GatedServer, next: { a2: Promise<string>; b1: Promise<string> }) => Promise<void>,
): Promise<void> {
  const server = await gatedServer(1, loop);
  const clients: Client[] = [client(server.port), client(server.port)];
  const [a, b] = clients as [Client, Client];
  try {
    const a1 = a.get('/a1');
    await until(() => server.read.length === 1);
    const b1 = b.get('/b1');
    await until(() => server.read.length === 2);
    server.answer('/a1');
    await a1;
    await check(server, { a2: a.get('/a2'), b1 });
  } finally {
    for (const each of clients) each.close();
    await server.close();
  }
}

describe(IntakeGate.name, () => {
  it('holds a connection unread while the loop is saturated and the requests in progress are at the bound', () =>
    afterOneAnswer({ value: 1 }, async (server, { a2, b1 }) => {
      // a's next request waits in the kernel: b's is still in progress.
      await settle();
      expect(server.read).toEqual(['/a1', '/b1']);
      expect(server.gate.connectionsHeld).toBe(1);
      server.answer('/b1');
      await b1;
      await until(() => server.read.length === 3);
      expect(server.read).toEqual(['/a1', '/b1', '/a2']);
      server.answer('/a2');
      await expect(a2).resolves.toBe('/a2');
    }));

  it('reads on while the loop has room, however many requests are in progress', () =>
    afterOneAnswer({ value: 0.5 }, async (server, { a2, b1 }) => {
      await until(() => server.read.length === 3);
      expect(server.gate.connectionsHeld).toBe(0);
      server.answer('/a2');
      server.answer('/b1');
      await Promise.all([a2, b1]);
    }));

  it('resumes the connections it holds once the loop has room again, even if no request ends', () => {
    const loop = { value: 1 };
    return afterOneAnswer(loop, async (server, { a2, b1 }) => {
      await settle();
      expect(server.read).not.toContain('/a2');
      loop.value = 0.2;
      await until(() => server.read.includes('/a2'));
      server.answer('/a2');
      server.answer('/b1');
      await Promise.all([a2, b1]);
    });
  });

  it('gives back what it holds a share at a time once the loop has room, not all in one turn', async () => {
    const loop = { value: 1 };
    const server = await gatedServer(1, loop);
    const clients = Array.from({ length: 6 }, () => client(server.port));
    try {
      // One request stays in progress; five clients are answered and ask again: held.
      const stays = clients[0]!.get('/stays');
      await until(() => server.read.length === 1);
      for (let i = 1; i <= 5; i++) {
        const first = clients[i]!.get(`/c${i}`);
        await until(() => server.read.includes(`/c${i}`));
        server.answer(`/c${i}`);
        await first;
      }
      const again = clients.slice(1).map((each, i) => each.get(`/again${i + 1}`));
      await until(() => server.gate.connectionsHeld === 5);
      loop.value = 0.2;
      const readAgain = () => server.read.filter((url) => url.startsWith('/again'));
      await until(() => readAgain().length > 0);
      expect(readAgain().length).toBeLessThan(5);
      // The bound keeps growing while the loop has room: every one is read in the end.
      await until(() => readAgain().length === 5);
      for (const url of readAgain()) server.answer(url);
      server.answer('/stays');
      await Promise.all([stays, ...again]);
    } finally {
      for (const each of clients) each.close();
      await server.close();
    }
  });

  it('never holds a probe: its connection is read at once whatever the load', async () => {
    const loop = { value: 1 };
    const server = await gatedServer(1, loop);
    const [busy, probe] = [client(server.port), client(server.port)];
    try {
      const b1 = busy.get('/b1');
      await until(() => server.read.length === 1);
      for (let i = 0; i < 3; i++) await expect(probe.get('/health/live')).resolves.toBe('ok');
      expect(server.gate.connectionsHeld).toBe(0);
      server.answer('/b1');
      await b1;
    } finally {
      busy.close();
      probe.close();
      await server.close();
    }
  });
});
