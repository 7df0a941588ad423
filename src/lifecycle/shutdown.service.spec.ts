import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppConfig } from '../config/app-config';
import type { WorkerPoolService } from '@corepool/nestjs';
import { ShutdownService } from './shutdown.service';

/** A real server whose responses say `Connection: close` when the service says so. */
async function serve(service: ShutdownService): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    service.admits(req, res);
    req.resume();
    // A task move asked while this request is in flight: it is the one that moves.
    if (req.url === '/move') service.makeRoom(60_000, 1, 'requests');
    if (service.closesConnection(req)) res.setHeader('connection', 'close');
    res.end('ok');
  });
  service.bind(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Polls a condition about a real server, which changes state on the event loop's next turns. */
const until = (check: () => boolean) =>
  new Promise<void>((done) => {
    const poll = () => (check() ? done() : setTimeout(poll, 10));
    poll();
  });

function get(agent: Agent, url: string): Promise<string | undefined> {
  return new Promise((done, fail) => {
    const req = request(url, { agent }, (response) => {
      response.resume();
      response.on('end', () => done(response.headers.connection));
    });
    req.on('error', fail);
    req.end();
  });
}

describe(ShutdownService.name, () => {
  const config = {
    http: { maxConnectionAgeMs: 20, connectionTimeoutMs: 0 },
    shutdown: { delayMs: 0, timeoutMs: 1_000 },
  } as unknown as AppConfig;
  let server: Server | undefined;
  let agent: Agent | undefined;
  let service: ShutdownService | undefined;

  afterEach(async () => {
    // As Nest does before it closes the server: a hold never opens its listener again.
    service?.beforeApplicationShutdown();
    agent?.destroy();
    server?.closeAllConnections();
    await new Promise((done) => server?.close(done));
  });

  it('closes an old connection, but not while its listener holds (ADR 0027)', async () => {
    service = new ShutdownService(config, {} as WorkerPoolService);
    const served = await serve(service);
    server = served.server;
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect(await get(agent, served.url)).toBe('keep-alive');
    await new Promise((done) => setTimeout(done, 30));
    // Holding, a connection closed by age could only go to another process: it stays.
    service.makeRoom(60_000, 0);
    expect(await get(agent, served.url)).toBe('keep-alive');
    expect(await get(agent, served.url)).toBe('keep-alive');
  });

  it('closes an old connection after its next response otherwise', async () => {
    service = new ShutdownService(config, {} as WorkerPoolService);
    const served = await serve(service);
    server = served.server;
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    await get(agent, served.url);
    await new Promise((done) => setTimeout(done, 30));
    expect(await get(agent, served.url)).toBe('close');
  });

  it('a task move accepts again once its moved request was answered, long before its hold ends', async () => {
    service = new ShutdownService(config, {} as WorkerPoolService);
    const served = await serve(service);
    server = served.server;
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect(await get(agent, `${served.url}/move`)).toBe('close');
    expect(server.listening).toBe(false);
    // Held for up to 60 s, it listens again once its client had time to reconnect elsewhere.
    await until(() => server!.listening);
    expect(await get(agent, served.url)).toBe('keep-alive');
  });

  it('accepts again at once when told that the process it made room for has died', async () => {
    service = new ShutdownService(config, {} as WorkerPoolService);
    const served = await serve(service);
    server = served.server;
    service.makeRoom(60_000, 0);
    expect(server.listening).toBe(false);
    service.acceptAgain();
    await until(() => server!.listening);
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect(await get(agent, served.url)).toBe('keep-alive');
  });
});
