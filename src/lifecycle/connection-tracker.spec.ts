import { Agent, createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { ConnectionTracker } from './connection-tracker';

interface Harness {
  readonly server: Server;
  readonly tracker: ConnectionTracker;
  readonly url: string;
  readonly port: number;
  /** The server's side of every connection it accepted. */
  readonly accepted: Socket[];
  /** Resolves the response held by the server (see `hold`). */
  release(): void;
}

/** A real HTTP server whose connections a tracker follows; `/hold` answers only on `release()`. */
async function harness(): Promise<Harness> {
  const tracker = new ConnectionTracker();
  const held: Array<() => void> = [];
  const server = createServer((req, res) => {
    tracker.begin(req, res);
    req.resume();
    if (req.url === '/hold') held.push(() => res.end('late'));
    else res.end('ok');
  });
  const accepted: Socket[] = [];
  server.on('connection', (socket: Socket) => {
    accepted.push(socket);
    tracker.opened(socket);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    tracker,
    url: `http://127.0.0.1:${port}`,
    port,
    accepted,
    release: () => held.splice(0).forEach((answer) => answer()),
  };
}

function get(agent: Agent, url: string): Promise<{ body: string; socket: Socket }> {
  return new Promise((done, fail) => {
    const req = request(url, { agent }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => done({ body, socket: req.socket! }));
    });
    req.on('error', fail);
    req.end();
  });
}

/** Polls a condition about real sockets, which change state on the event loop's next turns. */
const until = (check: () => boolean) =>
  new Promise<void>((done) => {
    const poll = () => (check() ? done() : setTimeout(poll, 5));
    poll();
  });

const closedEvent = (socket: Socket) =>
  new Promise<void>((done) => {
    if (socket.destroyed) done();
    else socket.once('close', () => done());
  });

describe(ConnectionTracker.name, () => {
  let h: Harness;
  let agent: Agent;

  beforeEach(async () => {
    h = await harness();
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
  });

  afterEach(async () => {
    agent.destroy();
    h.server.closeAllConnections();
    await new Promise((done) => h.server.close(done));
  });

  it('leaves a connection that has just fallen idle open, and closes it once it has settled', async () => {
    const { socket } = await get(agent, `${h.url}/`);
    expect(h.tracker.openConnections).toBe(1);

    expect(h.tracker.closeSettled(60_000)).toBe(0);
    expect(h.tracker.openConnections).toBe(1);
    expect(h.tracker.closeSettled(0)).toBe(1);
    await closedEvent(socket);
    expect(h.tracker.openConnections).toBe(0);
  });

  it('counts the settle time from the drain start at the earliest, for a connection idle since before it', async () => {
    await get(agent, `${h.url}/`);
    await new Promise((done) => setTimeout(done, 30));
    // Idle for 30 ms: settled for 20 ms, but not 20 ms since a drain that starts now.
    expect(h.tracker.closeSettled(20, performance.now())).toBe(0);
    expect(h.tracker.closeSettled(20)).toBe(1);
  });

  it('never closes a connection whose reading is paused: a request may wait unread in the kernel', async () => {
    await get(agent, `${h.url}/`);
    const server = h.accepted[0]!;
    server.pause();
    expect(h.tracker.closeSettled(0)).toBe(0);
    server.resume();
    expect(h.tracker.closeSettled(0)).toBe(1);
  });

  it('never closes a connection with a request in flight', async () => {
    const answer = get(agent, `${h.url}/hold`);
    await until(() => h.tracker.inFlight === 1);
    expect(h.tracker.closeSettled(0)).toBe(0);
    h.release();
    expect((await answer).body).toBe('late');
  });

  it('closes a connection silent that long with a request in flight, and no other', async () => {
    const idle = await get(new Agent({ keepAlive: true }), `${h.url}/`);
    const answer = get(agent, `${h.url}/hold`).catch((error: Error) => error);
    await until(() => h.tracker.inFlight === 1);
    // The first look takes the connection's bytes so far as the start of its silence.
    expect(h.tracker.closeSilent(40)).toBe(0);
    await new Promise((done) => setTimeout(done, 60));
    expect(h.tracker.closeSilent(40)).toBe(1);
    expect(await answer).toMatchObject({ message: 'socket hang up' });
    // The idle keep-alive connection is left to the keep-alive timeout.
    expect(idle.socket.destroyed).toBe(false);
    idle.socket.destroy();
  });

  it('counts any traffic on the connection as a sign of life', async () => {
    const upload = request(`${h.url}/hold`, { agent, method: 'POST' });
    upload.on('error', () => undefined);
    upload.write('first part');
    await until(() => h.tracker.inFlight === 1);
    expect(h.tracker.closeSilent(40)).toBe(0);
    await new Promise((done) => setTimeout(done, 60));
    const server = h.accepted[0]!;
    const readBefore = server.bytesRead;
    upload.write('second part');
    await until(() => server.bytesRead > readBefore);
    expect(h.tracker.closeSilent(40)).toBe(0);
    await new Promise((done) => setTimeout(done, 60));
    expect(h.tracker.closeSilent(40)).toBe(1);
  });

  it('counts a connection from the moment it is accepted, before any request', async () => {
    const socket = connect(h.port, '127.0.0.1');
    await until(() => h.tracker.openConnections === 1);
    expect(h.tracker.inFlight).toBe(0);
    socket.destroy();
  });

  it('resolves whenClosed once busy connections have answered and idle ones have settled', async () => {
    const idleAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    await get(idleAgent, `${h.url}/`);
    const answer = get(agent, `${h.url}/hold`);
    await until(() => h.tracker.inFlight === 1);

    const closed = h.tracker.whenClosed(20, 10_000);
    h.release();
    expect((await answer).body).toBe('late');
    // The answered connection is kept alive by this server: it settles and is closed too.
    await expect(closed).resolves.toBe(true);
    expect(h.tracker.openConnections).toBe(0);
    idleAgent.destroy();
  });

  it('resolves whenClosed false when a request is still in flight at the deadline', async () => {
    const answer = get(agent, `${h.url}/hold`).catch(() => undefined);
    await until(() => h.tracker.inFlight === 1);
    await expect(h.tracker.whenClosed(0, 50)).resolves.toBe(false);
    h.release();
    await answer;
  });

  it('tells whether a connection outlived an age bound, give or take its own tenth', async () => {
    await get(agent, `${h.url}/`);
    const [socket] = h.accepted as [Socket];
    expect(h.tracker.outlived(socket, 60_000)).toBe(false);
    await new Promise((done) => setTimeout(done, 120));
    // 120 ms is past 100 ms × 1.1 at most.
    expect(h.tracker.outlived(socket, 100)).toBe(true);
  });

  it('asks as many responses as the share of its connections to close them', async () => {
    const first = new Agent({ keepAlive: true, maxSockets: 1 });
    const second = new Agent({ keepAlive: true, maxSockets: 1 });
    const third = new Agent({ keepAlive: true, maxSockets: 1 });
    for (const client of [first, second, third]) await get(client, `${h.url}/`);
    expect(h.tracker.shed(0.5)).toBe(2);
    expect([h.tracker.takeClose(), h.tracker.takeClose(), h.tracker.takeClose()]).toEqual([
      true,
      true,
      false,
    ]);
    // A new request replaces what is left, so a reload's `shed(0)` asks for none.
    h.tracker.shed(1);
    h.tracker.shed(0);
    expect(h.tracker.takeClose()).toBe(false);
    for (const client of [first, second, third]) client.destroy();
  });

  it('asks the share of its requests in flight instead, when told to: idle connections do not count', async () => {
    const idle = [1, 2, 3].map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
    for (const client of idle) await get(client, `${h.url}/`);
    const busy = [1, 2].map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
    const held = busy.map((client) => get(client, `${h.url}/hold`));
    await until(() => h.tracker.inFlight === 2);
    // 5 connections, 2 requests in flight: half of the requests is one response.
    expect(h.tracker.shed(0.5, 'requests')).toBe(1);
    h.release();
    await Promise.all(held);
    for (const client of [...idle, ...busy]) client.destroy();
  });
});
