import { request } from 'node:http';
import { randomUUID } from 'node:crypto';
import { KeyFile } from './support/credentials';
import { waitUntil } from './support/poll';
import { REDIS_URL, uniquePrefix } from './support/jobs-client';
import { startService, type ServiceProcess } from './support/service-process';

jest.setTimeout(120_000);

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: any;
  readonly requestId: string;
}

/**
 * One request on a connection of its own (no keep-alive), so that with
 * round-robin scheduling consecutive requests go to alternate processes.
 */
function send(
  service: ServiceProcess,
  method: 'GET' | 'POST',
  path: string,
  key: string,
  body?: unknown,
): Promise<Answer> {
  const requestId = randomUUID();
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${service.url}${path}`,
      {
        method,
        agent: false,
        headers: {
          'x-api-key': key,
          'x-request-id': requestId,
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: text === '' ? undefined : JSON.parse(text),
            requestId,
          }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

/** The pid of the process whose access log line answered this request. */
async function pidOf(service: ServiceProcess, answer: Answer): Promise<number> {
  const line = await service.waitForLine(
    new RegExp(`"reqId":"${answer.requestId}".*request completed`),
  );
  return (JSON.parse(line) as { pid: number }).pid;
}

/** How long the long task goes alone before the short ones probe the slot. */
const HEAD_START_MS = 200;

/**
 * Starts a long task and resolves once it holds the client's one slot: when a
 * short task of the same client is refused. A short task sent at the same
 * moment may win the slot instead; then the long one is refused and tried again.
 * (Slots are taken and given back by messages from two processes to the
 * primary, so for a moment a freed slot may still look taken.)
 */
async function holdSlot(
  long: () => Promise<Answer>,
  short: () => Promise<Answer>,
): Promise<{ running: Promise<Answer> }> {
  for (let attempt = 0; attempt < 5; attempt++) {
    // After a lost attempt, the releases of the short tasks that won it are still on their way
    // (to the primary, or to Redis): sent at once, the long task met a slot taken by them.
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 250));
    const running = long();
    let settled: Answer | undefined;
    void running.then((answer) => (settled = answer));
    // A head start: a short task sent in the same moment races the long one for the slot, and
    // on a loaded machine (CI) won five attempts in a row.
    await new Promise((resolve) => setTimeout(resolve, HEAD_START_MS));
    await waitUntil(
      'the long task to hold the slot, or to lose it',
      async () => settled !== undefined || (await short()).status === 429,
    );
    // That refusal may come from a short task's slot whose release had not reached the primary
    // yet; one more round trip lets the long task's own refusal, if any, arrive first.
    await short();
    // Wrapped: an async function that returns a promise would wait for it.
    if (settled === undefined) return { running };
    expect(settled.status).toBe(429);
  }
  throw new Error('the long task never held the slot');
}

const KEYS = { alice: { key: 'alice-key-31f0' }, bob: { key: 'bob-key-8c2d' } };

/** Two processes that take connections in turn, so a test knows both served. */
function twoProcesses(keys: KeyFile, env: Record<string, string>) {
  return startService(
    {
      CLUSTER_PROCESSES: '2',
      POOL_THREADS: '1',
      CLUSTER_SCHEDULING_POLICY: 'round-robin',
      AUTH_MODE: 'api-key',
      AUTH_API_KEYS_FILE: keys.path,
      ...env,
    },
    { readyPath: '/health/ready', readyLines: { pattern: /process \d+ ready/, count: 2 } },
  );
}

describe('tasks in flight per client, across the cluster’s processes', () => {
  const keys = new KeyFile(KEYS);
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await twoProcesses(keys, { QUOTA_TASKS_IN_FLIGHT: '1' });
  });
  afterAll(() => service.stop());

  it('refuses a client’s second task on either process while its first runs; others are not affected', async () => {
    const short = () =>
      send(service, 'POST', '/api/tasks/which-process', KEYS.alice.key, { ms: 1 });
    const { running: long } = await holdSlot(
      () => send(service, 'POST', '/api/tasks/which-process', KEYS.alice.key, { ms: 5000 }),
      short,
    );
    const refused: Answer[] = [];
    for (let attempt = 0; attempt < 4; attempt++) refused.push(await short());
    for (const answer of refused) {
      expect(answer.status).toBe(429);
      expect(answer.body).toMatchObject({ code: 'RATE_LIMITED' });
      expect(answer.headers['retry-after']).toBe('1');
    }
    const pids = new Set(await Promise.all(refused.map((answer) => pidOf(service, answer))));
    expect(pids.size).toBe(2);

    const bob = await send(service, 'POST', '/api/tasks/which-process', KEYS.bob.key, { ms: 1 });
    expect(bob.status).toBe(200);

    expect((await long).status).toBe(200);
    expect((await short()).status).toBe(200);
  });
});

/**
 * Sends `2 × limit` requests at once, each on its own connection, to the
 * services in turn. A count shared by every process accepts `limit` of them
 * in one window, with `RateLimit-Remaining` counting down once; counts kept
 * per process would accept `limit` at each. A burst that straddles the turn
 * of a second is inconclusive, so up to three bursts are tried.
 */
async function sharedCountSeen(services: ServiceProcess[], key: string, limit: number) {
  const seen: string[] = [];
  for (let burst = 0; burst < 3; burst++) {
    const answers = await Promise.all(
      Array.from({ length: 2 * limit }, (_, i) =>
        send(services[i % services.length]!, 'GET', '/api/tasks', key),
      ),
    );
    const accepted = answers.filter((answer) => answer.status === 200);
    const remaining = accepted
      .map((answer) => Number(answer.headers['ratelimit-remaining']))
      .sort();
    for (const answer of answers.filter((a) => a.status !== 200)) {
      expect(answer.status).toBe(429);
      expect(answer.body).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
      expect(answer.headers['ratelimit-limit']).toBe(String(limit));
      expect(answer.headers['ratelimit-remaining']).toBe('0');
      expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(answer.headers['ratelimit-reset']).toBeDefined();
    }
    const expected = Array.from({ length: limit }, (_, i) => i);
    seen.push(`burst ${burst}: accepted ${accepted.length}, remaining ${remaining.join(',')}`);
    if (accepted.length === limit && remaining.join() === expected.join()) return seen;
    await new Promise((done) => setTimeout(done, 1_100));
  }
  throw new Error(`no burst showed one shared count:\n${seen.join('\n')}`);
}

describe('requests per second per client, across the cluster’s processes (counted in the primary)', () => {
  const keys = new KeyFile(KEYS);
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await twoProcesses(keys, { QUOTA_REQUESTS_PER_SECOND: '4' });
  });
  afterAll(() => service.stop());

  it('counts one quota for a client whichever process serves it', async () => {
    await sharedCountSeen([service], KEYS.alice.key, 4);
  });

  it('never counts the probes, and counts each client apart', async () => {
    for (let i = 0; i < 10; i++) {
      const probe = await fetch(`${service.url}/health/ready`);
      expect(probe.status).toBe(200);
      expect(probe.headers.get('ratelimit-limit')).toBeNull();
    }
    const bob = await send(service, 'GET', '/api/tasks', KEYS.bob.key);
    expect(bob.status).toBe(200);
    expect(bob.headers['ratelimit-limit']).toBe('4');
  });
});

describe('requests per second per client, across replicas sharing a Redis', () => {
  const keys = new KeyFile(KEYS);
  const replicas: ServiceProcess[] = [];

  beforeAll(async () => {
    const env = {
      CLUSTER_PROCESSES: '1',
      POOL_THREADS: '1',
      AUTH_MODE: 'api-key',
      AUTH_API_KEYS_FILE: keys.path,
      QUOTA_REQUESTS_PER_SECOND: '4',
      REDIS_URL,
      JOBS_QUEUE_PREFIX: uniquePrefix(),
    };
    replicas.push(await startService(env), await startService(env));
  });
  afterAll(() => Promise.all(replicas.map((replica) => replica.stop())));

  it('counts one quota for a client whichever replica serves it', async () => {
    await sharedCountSeen(replicas, KEYS.alice.key, 4);
  });
});

describe('tasks in flight per client, across replicas sharing a Redis (leases per process)', () => {
  const keys = new KeyFile(KEYS);
  const replicas: ServiceProcess[] = [];

  beforeAll(async () => {
    const env = {
      CLUSTER_PROCESSES: '1',
      POOL_THREADS: '1',
      AUTH_MODE: 'api-key',
      AUTH_API_KEYS_FILE: keys.path,
      QUOTA_TASKS_IN_FLIGHT: '1',
      REDIS_URL,
      JOBS_QUEUE_PREFIX: uniquePrefix(),
    };
    replicas.push(await startService(env), await startService(env));
  });
  afterAll(() => Promise.all(replicas.map((replica) => replica.stop())));

  const task = (replica: ServiceProcess, key: string, ms: number) =>
    send(replica, 'POST', '/api/tasks/which-process', key, { ms });

  it('refuses a client’s second task on the other replica while its first runs', async () => {
    const [first, second] = replicas as [ServiceProcess, ServiceProcess];
    const { running: long } = await holdSlot(
      () => task(first, KEYS.alice.key, 5000),
      () => task(second, KEYS.alice.key, 1),
    );
    for (const replica of [second, first]) {
      const refused = await task(replica, KEYS.alice.key, 1);
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ code: 'RATE_LIMITED' });
    }
    expect((await task(second, KEYS.bob.key, 1)).status).toBe(200);
    expect((await long).status).toBe(200);
    expect((await task(second, KEYS.alice.key, 1)).status).toBe(200);
  });

  it('frees the slots of a replica killed while it held them, once its lease expires', async () => {
    const [first, second] = replicas as [ServiceProcess, ServiceProcess];
    // The long task's connection dies with its replica: that answer is not the point here.
    const gone = { status: 0, headers: {}, body: undefined, requestId: '' } satisfies Answer;
    await holdSlot(
      () => task(first, KEYS.bob.key, 60_000).catch(() => gone),
      () => task(second, KEYS.bob.key, 1),
    );
    await first.stop(); // SIGKILL: no release, no goodbye
    await waitUntil(
      'the dead replica’s slot to be freed',
      async () => (await task(second, KEYS.bob.key, 1)).status === 200,
      { timeoutMs: 30_000, intervalMs: 500 },
    );
  });
});

/** GET /api/tasks without credentials, from `localAddress` (any 127.x address reaches loopback). */
function anonymous(
  service: ServiceProcess,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${service.url}/api/tasks`,
      { agent: false, localAddress, headers },
      (response) => {
        response.resume().on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** `count` requests at once; the statuses. */
const burst = (count: number, send: (i: number) => Promise<number>) =>
  Promise.all(Array.from({ length: count }, (_, i) => send(i)));

/** One process without authentication, 5 requests per second per client. */
const anonymousService = (env: Record<string, string>) =>
  startService({
    CLUSTER_PROCESSES: '1',
    POOL_THREADS: '1',
    QUOTA_REQUESTS_PER_SECOND: '5',
    ...env,
  });

describe('requests per second without authentication: one quota per caller, not one for all', () => {
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await anonymousService({});
  });
  afterAll(() => service.stop());

  it('refuses a flooding address with 429 while other addresses are served', async () => {
    // The flooder sends a new x-client-id with every request: an untrusted header is no key.
    const [flood, others] = await Promise.all([
      burst(30, (i) => anonymous(service, '127.0.0.1', { 'x-client-id': `me-${i}` })),
      burst(3, (i) => anonymous(service, i % 2 === 0 ? '127.0.0.2' : '127.0.0.3')),
    ]);
    expect(flood.filter((status) => status === 429).length).toBeGreaterThan(0);
    expect(flood.filter((status) => status === 200).length).toBeLessThanOrEqual(15);
    expect(others).toEqual([200, 200, 200]);
  });
});

describe('requests per second without authentication, behind a trusted proxy and gateway', () => {
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await anonymousService({
      TRUST_PROXY: '127.0.0.1',
      CLIENT_KEY_HEADER_TRUSTED: 'true',
    });
  });
  afterAll(() => service.stop());

  it('keys by the trusted x-client-id, else by the forwarded address', async () => {
    const viaProxy = (headers: Record<string, string>) => anonymous(service, '127.0.0.1', headers);
    const [byHeader, otherHeader, byAddress, otherAddress] = await Promise.all([
      burst(30, (i) => viaProxy({ 'x-client-id': 'flooder', 'x-forwarded-for': `203.0.113.${i}` })),
      burst(3, () => viaProxy({ 'x-client-id': 'polite', 'x-forwarded-for': '203.0.113.1' })),
      burst(30, () => viaProxy({ 'x-forwarded-for': '198.51.100.7' })),
      burst(3, () => viaProxy({ 'x-forwarded-for': '198.51.100.8' })),
    ]);
    for (const flood of [byHeader, byAddress]) {
      expect(flood.filter((status) => status === 429).length).toBeGreaterThan(0);
    }
    expect(otherHeader).toEqual([200, 200, 200]);
    expect(otherAddress).toEqual([200, 200, 200]);
  });

  it('ignores X-Forwarded-For from an address that is not the proxy', async () => {
    const spoofed = await burst(30, (i) =>
      anonymous(service, '127.0.0.2', { 'x-forwarded-for': `192.0.2.${i}` }),
    );
    expect(spoofed.filter((status) => status === 429).length).toBeGreaterThan(0);
  });
});
