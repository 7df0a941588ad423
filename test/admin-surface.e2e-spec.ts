import { ErrorCode } from '../src/common/error-codes';
import { KeyFile } from './support/credentials';
import { parseMetrics, sumOf } from './support/metrics-text';
import { freePort, startService, type ServiceProcess } from './support/service-process';

jest.setTimeout(120_000);

/**
 * How long a collection answers later scrapes: the longest allowed, far longer than a burst
 * takes on a busy machine (the sharing of a collection that is still running, and the
 * cache's end, are shared-collection.spec.ts's).
 */
const SCRAPE_CACHE_MS = 60_000;

const statusOf = async (url: string) => (await fetch(url)).status;

/** The collections counted in a scrape's text, its own included. */
const collectionsIn = (text: string) =>
  sumOf(parseMetrics(text), 'compute_metrics_collections_total');

describe('ADMIN_PORT: metrics and detailed health on their own listener (cluster of 2)', () => {
  let service: ServiceProcess;
  let admin: string;

  beforeAll(async () => {
    const adminPort = await freePort();
    admin = `http://127.0.0.1:${adminPort}`;
    service = await startService(
      {
        CLUSTER_PROCESSES: '2',
        POOL_THREADS: '1',
        ADMIN_PORT: String(adminPort),
        METRICS_CACHE_MS: String(SCRAPE_CACHE_MS),
      },
      // Each process says so once its threads are warm and it listens.
      { readyLines: { pattern: /Nest application successfully started/, count: 2 } },
    );
  });

  afterAll(() => service?.stop());

  it('keeps the API and the probes on the public port, and answers 404 for the admin routes there', async () => {
    for (const path of ['/metrics', '/health']) {
      const response = await fetch(`${service.url}${path}`);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ code: ErrorCode.ROUTE_NOT_FOUND });
    }
    expect(await statusOf(`${service.url}/health/live`)).toBe(200);
    expect(await statusOf(`${service.url}/health/ready`)).toBe(200);
    expect(await statusOf(`${service.url}/api/tasks`)).toBe(200);
  });

  it('serves the metrics of every process and the detailed health on the admin port, and nothing else', async () => {
    const text = await (await fetch(`${admin}/metrics`)).text();
    const pids = new Set(
      parseMetrics(text)
        .filter((sample) => sample.name === 'process_resident_memory_bytes')
        .map((sample) => sample.labels.pid),
    );
    expect(pids.size).toBe(2);
    const health = await fetch(`${admin}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      details: { pool: {}, memory: { bodyBytesHeld: 0, bodyBudgetBytes: expect.any(Number) } },
    });
    for (const path of ['/api/tasks', '/health/live', '/docs']) {
      expect({ path, status: await statusOf(`${admin}${path}`) }).toEqual({ path, status: 404 });
    }
  });

  it('answers concurrent scrapes from one collection of the cluster', async () => {
    const first = await (await fetch(`${admin}/metrics`)).text();
    expect(collectionsIn(first)).toBeGreaterThanOrEqual(1);
    const bodies = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const response = await fetch(`${admin}/metrics`);
        expect(response.status).toBe(200);
        return response.text();
      }),
    );
    // Every scrape got the same text: fifty scrapes, one collection (the one before them,
    // or a new one if the cache ended just then).
    expect(new Set(bodies).size).toBe(1);
    expect(collectionsIn(bodies[0]!) - collectionsIn(first)).toBeLessThanOrEqual(1);
  });
});

describe('DOCS_ENABLED', () => {
  let docsOn: ServiceProcess;
  let docsOff: ServiceProcess;

  beforeAll(async () => {
    const env = { CLUSTER_PROCESSES: '1', POOL_THREADS: '1', LOG_LEVEL: 'warn' };
    [docsOn, docsOff] = await Promise.all([
      startService(env),
      startService({ ...env, DOCS_ENABLED: 'false' }),
    ]);
  });

  afterAll(() => Promise.all([docsOn?.stop(), docsOff?.stop()]));

  it('serves Swagger UI with only the files its page loads', async () => {
    const page = await (await fetch(`${docsOn.url}/docs`)).text();
    const loaded = [...page.matchAll(/(?:src|href)="\.?\/?(?:docs\/)?([\w.-]+)"/g)].map(
      (match) => match[1]!,
    );
    expect(loaded).toEqual(
      expect.arrayContaining(['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-init.js']),
    );
    for (const file of loaded) {
      expect({ file, status: await statusOf(`${docsOn.url}/docs/${file}`) }).toEqual({
        file,
        status: 200,
      });
    }
    expect(await statusOf(`${docsOn.url}/docs-json`)).toBe(200);
    for (const file of ['package.json', 'README.md', 'swagger-ui-bundle.js.map', 'index.js']) {
      expect({ file, status: await statusOf(`${docsOn.url}/docs/${file}`) }).toEqual({
        file,
        status: 404,
      });
    }
  });

  it('serves no docs when turned off', async () => {
    for (const path of ['/docs', '/docs-json', '/docs/swagger-ui.css']) {
      expect({ path, status: await statusOf(`${docsOff.url}${path}`) }).toEqual({
        path,
        status: 404,
      });
    }
    expect(await statusOf(`${docsOff.url}/api/tasks`)).toBe(200);
  });
});

describe('ADMIN_PORT with API keys', () => {
  const keys = new KeyFile({ app: { key: 'app-key-0c7e' } });
  let service: ServiceProcess;
  let admin: string;

  beforeAll(async () => {
    const adminPort = await freePort();
    admin = `http://127.0.0.1:${adminPort}`;
    service = await startService({
      CLUSTER_PROCESSES: '1',
      POOL_THREADS: '1',
      ADMIN_PORT: String(adminPort),
      AUTH_MODE: 'api-key',
      AUTH_API_KEYS_FILE: keys.path,
    });
  });

  afterAll(() => service?.stop());

  it('lets Prometheus scrape the admin port without a key, while the public API still needs one', async () => {
    expect(await statusOf(`${admin}/metrics`)).toBe(200);
    expect(await statusOf(`${admin}/health`)).toBe(200);
    expect(await statusOf(`${service.url}/api/tasks`)).toBe(401);
    const withKey = await fetch(`${service.url}/api/tasks`, {
      headers: { 'x-api-key': 'app-key-0c7e' },
    });
    expect(withKey.status).toBe(200);
    // The admin port answers operator routes only: the API is not reachable there, key or not.
    expect(await statusOf(`${admin}/api/tasks`)).toBe(404);
  });
});
