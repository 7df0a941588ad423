import { startService, type ServiceProcess } from './support/service-process';

jest.setTimeout(60_000);

type LogLine = Record<string, unknown> & { msg?: string; reqId?: string; level?: number };

/** The JSON lines the service printed about one request id. */
const linesOf = (service: ServiceProcess, reqId: string): LogLine[] =>
  service.lines
    .filter((line) => line.includes(reqId))
    .map((line) => JSON.parse(line) as LogLine)
    .filter((line) => line.reqId === reqId);

describe('Access log (real process, JSON lines at LOG_LEVEL=info)', () => {
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await startService({ CLUSTER_PROCESSES: '1', POOL_THREADS: '1', LOG_LEVEL: 'info' });
  });
  afterAll(() => service.stop());

  const send = (path: string, reqId: string) =>
    fetch(`${service.url}${path}`, { headers: { 'x-request-id': reqId } });
  const postTask = (task: string, body: string, reqId: string) =>
    fetch(`${service.url}/api/tasks/${task}`, {
      method: 'POST',
      headers: { 'x-request-id': reqId, 'content-type': 'application/json' },
      body,
    });

  it('writes one line per answered request, with its id, route, status and time', async () => {
    const response = await postTask('compute', '{"iterations":10}', 'access-ok-1');
    expect(response.status).toBe(200);
    const line = await service.waitForLine(/"reqId":"access-ok-1".*"request completed"/);
    expect(JSON.parse(line)).toMatchObject({
      level: 30,
      reqId: 'access-ok-1',
      req: { method: 'POST', url: '/api/tasks/compute' },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
      msg: 'request completed',
    });
    // Only that line at info: Fastify's "incoming request" line is at debug.
    expect(linesOf(service, 'access-ok-1')).toHaveLength(1);
  });

  it('logs client errors at warn and the answer carries the same id', async () => {
    const response = await postTask('compute', '{"iterations":-1}', 'access-bad-1');
    expect(response.status).toBe(400);
    expect(response.headers.get('x-request-id')).toBe('access-bad-1');
    const line = await service.waitForLine(/"reqId":"access-bad-1".*"request completed"/);
    expect(JSON.parse(line)).toMatchObject({ level: 40, res: { statusCode: 400 } });
  });

  it('logs server errors at error', async () => {
    const response = await postTask('throw', '{"message":"planned"}', 'access-fail-1');
    expect(response.status).toBe(500);
    const line = await service.waitForLine(/"reqId":"access-fail-1".*"request completed"/);
    expect(JSON.parse(line)).toMatchObject({ level: 50, res: { statusCode: 500 } });
  });

  it('does not log probes and scrapes', async () => {
    for (const path of ['/health/live', '/health/ready', '/health', '/metrics']) {
      expect((await send(path, `access-probe${path.replaceAll('/', '-')}`)).ok).toBe(true);
    }
    // A logged request after them: once its line is out, theirs would be too.
    await send('/api/tasks', 'access-after-probes');
    await service.waitForLine(/"reqId":"access-after-probes".*"request completed"/);
    expect(service.lines.filter((line) => line.includes('"reqId":"access-probe'))).toEqual([]);
  });
});
