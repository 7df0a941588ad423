import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ListenerHold } from './listener-hold';

/** One GET over `agent`; resolves with the body, rejects with the socket error's code. */
function get(agent: Agent, port: number): Promise<string> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => done(body));
    });
    req.on('error', (error: NodeJS.ErrnoException) => fail(new Error(error.code)));
    req.end();
  });
}

describe(ListenerHold.name, () => {
  let server: Server;
  let port: number;
  let mayListen: boolean;
  let errors: Error[];
  let hold: ListenerHold;

  beforeEach(async () => {
    server = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
    mayListen = true;
    errors = [];
    hold = new ListenerHold(
      server,
      () => mayListen,
      (error) => errors.push(error),
    );
  });

  afterEach(async () => {
    hold.stop();
    server.closeAllConnections();
    if (server.listening) await new Promise((done) => server.close(done));
  });

  it('stops accepting new connections, keeps the open ones, and accepts again on resume', async () => {
    const kept = new Agent({ keepAlive: true, maxSockets: 1 });
    await expect(get(kept, port)).resolves.toBe('ok');

    hold.hold(60_000);
    expect(hold.holding).toBe(true);
    // Outside a cluster the socket is really closed: a new connection is refused.
    const fresh = new Agent();
    await expect(get(fresh, port)).rejects.toThrow('ECONNREFUSED');
    await expect(get(kept, port)).resolves.toBe('ok');

    hold.resume();
    await new Promise((done) => server.once('listening', done));
    expect(hold.holding).toBe(false);
    await expect(get(fresh, port)).resolves.toBe('ok');
    expect(errors).toEqual([]);
    kept.destroy();
  });

  it('accepts again by itself after the longest hold', async () => {
    hold.hold(30);
    expect(server.listening).toBe(false);
    await new Promise((done) => server.once('listening', done));
    await expect(get(new Agent(), port)).resolves.toBe('ok');
  });

  it('stays closed once the drain has begun', async () => {
    hold.hold(60_000);
    mayListen = false;
    hold.resume();
    await new Promise((done) => setTimeout(done, 50));
    expect(server.listening).toBe(false);
  });

  it('does not hold once the drain has begun', () => {
    mayListen = false;
    hold.hold(60_000);
    expect(server.listening).toBe(true);
  });

  it('opens the listener once when asked to resume twice, and holds again if asked while it opens', async () => {
    hold.hold(60_000);
    hold.resume();
    hold.resume();
    // Asked again while the listen is on its way: it closes once it has opened.
    hold.hold(60_000);
    await new Promise((done) => setTimeout(done, 50));
    expect(server.listening).toBe(false);
    expect(hold.holding).toBe(true);
    hold.resume();
    await new Promise((done) => server.once('listening', done));
    await expect(get(new Agent(), port)).resolves.toBe('ok');
    expect(errors).toEqual([]);
  });

  it('never listens again once stopped: not when the longest hold runs out, nor when a listen was on its way', async () => {
    hold.hold(30);
    hold.stop();
    await new Promise((done) => setTimeout(done, 60));
    expect(server.listening).toBe(false);
    expect(hold.holding).toBe(false);

    const other = createServer();
    await new Promise<void>((done) => other.listen(0, '127.0.0.1', done));
    const reopening = new ListenerHold(
      other,
      () => true,
      (error) => errors.push(error),
    );
    reopening.hold(60_000);
    reopening.resume();
    reopening.stop();
    await new Promise((done) => setTimeout(done, 50));
    expect(other.listening).toBe(false);
    reopening.hold(30);
    await new Promise((done) => setTimeout(done, 60));
    expect(other.listening).toBe(false);
    expect(errors).toEqual([]);
  });
});
