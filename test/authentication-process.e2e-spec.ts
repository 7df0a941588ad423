import { writeFileSync } from 'node:fs';
import { KeyFile } from './support/credentials';
import { waitUntil } from './support/poll';
import { launchProcess, startService, type ServiceProcess } from './support/service-process';

jest.setTimeout(90_000);

/** How many lines so far say the keys were reloaded on SIGHUP (the file watcher says so too, apart). */
const reloadsOf = (service: ServiceProcess) =>
  service.lines.filter((line) => line.includes('API keys reloaded (SIGHUP)')).length;

/** Resolves once the service has reloaded its keys on SIGHUP once more than `before`. */
const nextReload = (service: ServiceProcess, before: number) =>
  waitUntil('the keys to be reloaded', () => reloadsOf(service) > before, { timeoutMs: 15_000 });

const tasks = (service: ServiceProcess, key: string) =>
  fetch(`${service.url}/api/tasks`, { headers: { 'x-api-key': key } });

/** One process, one thread, reading its API keys from `keys`. */
const withKeys = (keys: KeyFile) =>
  startService({
    CLUSTER_PROCESSES: '1',
    POOL_THREADS: '1',
    AUTH_MODE: 'api-key',
    AUTH_API_KEYS_FILE: keys.path,
  });

describe('API keys in a real process: rotation without downtime, access log', () => {
  const keys = new KeyFile({ billing: { key: 'billing-old-2b1e' }, ops: { key: 'ops-9d1c' } });
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await withKeys(keys);
  });
  afterAll(() => service.stop());

  it('names the client in the access log, never the key', async () => {
    const response = await fetch(`${service.url}/api/tasks`, {
      headers: { 'x-api-key': 'billing-old-2b1e', 'x-request-id': 'who-1' },
    });
    expect(response.status).toBe(200);
    const line = JSON.parse(await service.waitForLine(/"reqId":"who-1".*request completed/));
    expect(line).toMatchObject({ client: 'billing', res: { statusCode: 200 } });
    expect(service.lines.join('\n')).not.toContain('billing-old-2b1e');
  });

  it('rotates on SIGHUP: the new key works, the revoked one gets 401, the service never stops', async () => {
    // Step 1: both keys for a while, so clients can move over.
    keys.write({
      billing: { key: 'billing-old-2b1e' },
      'billing-2': { key: 'billing-new-77aa' },
      ops: { key: 'ops-9d1c' },
    });
    const before = reloadsOf(service);
    process.kill(service.pid, 'SIGHUP');
    await nextReload(service, before);
    expect((await tasks(service, 'billing-new-77aa')).status).toBe(200);
    expect((await tasks(service, 'billing-old-2b1e')).status).toBe(200);

    // Step 2: the old key is revoked, by name.
    keys.write({ 'billing-2': { key: 'billing-new-77aa' }, ops: { key: 'ops-9d1c' } }, ['billing']);
    const reloads = reloadsOf(service);
    process.kill(service.pid, 'SIGHUP');
    await nextReload(service, reloads);
    expect((await tasks(service, 'billing-old-2b1e')).status).toBe(401);
    expect((await tasks(service, 'billing-new-77aa')).status).toBe(200);
    expect((await fetch(`${service.url}/health/live`)).status).toBe(200);
  });

  it('reloads when the file changes, with no signal (a Kubernetes Secret update)', async () => {
    keys.write({ ops: { key: 'ops-9d1c' } }, ['billing-2']);
    await waitUntil(
      'the revoked key to be refused',
      async () => (await tasks(service, 'billing-new-77aa')).status === 401,
      { timeoutMs: 15_000 },
    );
    // Log lines leave up to 10 ms after they are logged (ADR 0028): waited for, not looked up.
    await service.waitForLine(/API keys reloaded \(file changed\)/, 5_000);
    expect((await tasks(service, 'ops-9d1c')).status).toBe(200);
  });

  it('keeps the keys it has when the new file does not parse', async () => {
    writeFileSync(keys.path, 'ops:not-a-digest\n');
    process.kill(service.pid, 'SIGHUP');
    await service.waitForLine(/API keys not reloaded \(SIGHUP\); the previous keys stay in use/);
    expect((await tasks(service, 'ops-9d1c')).status).toBe(200);
  });
});

describe('API key files cut short or saved half-way are refused on reload (real process)', () => {
  const KEYS = {
    billing: { key: 'billing-5e1a' },
    bob: { key: 'bob-admin-03f9', scopes: ['admin', 'jobs:read'] },
  };
  const keys = new KeyFile(KEYS);
  const [billingLine, bobLine] = KeyFile.lines(KEYS) as [string, string];
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await withKeys(keys);
  });
  afterAll(() => service.stop());

  /** Writes `text`, sends SIGHUP, and returns the error line the refused reload logged. */
  const refusedReload = async (text: string) => {
    const before = service.lines.length;
    keys.writeText(text);
    process.kill(service.pid, 'SIGHUP');
    await waitUntil(
      'the reload to be refused',
      () =>
        service.lines.slice(before).some((line) => line.includes('API keys not reloaded (SIGHUP)')),
      { timeoutMs: 15_000 },
    );
    return JSON.parse(
      service.lines.slice(before).find((line) => line.includes('not reloaded (SIGHUP)'))!,
    ) as { level: number; err: { message: string } };
  };
  /** Both keys still work, bob with its admin scope (GET /metrics needs `admin`). */
  const previousKeysHold = async () => {
    expect((await tasks(service, 'billing-5e1a')).status).toBe(200);
    const metrics = await fetch(`${service.url}/metrics`, {
      headers: { 'x-api-key': 'bob-admin-03f9' },
    });
    expect(metrics.status).toBe(200);
  };

  it.each([
    ['an empty file (an editor’s save caught half-way)', '', /lists no keys/],
    ['only comments', '# keys\n', /lists no keys/],
    [
      'a line cut inside its scopes (`admin` cut to `adm`)',
      `${billingLine}\n${bobLine.replace(/admin,jobs:read$/, 'adm')}\n`,
      /line 2: scope 1 is not one of/,
    ],
    [
      'a copy cut mid-line (no final line break)',
      `${billingLine}\n${bobLine.replace(/,jobs:read$/, '')}`,
      /does not end with a line break/,
    ],
    ['a key’s line dropped without revoking it', `${billingLine}\n`, /'bob' are no longer listed/],
  ])('refuses %s, logs an error and keeps the previous keys', async (_what, text, reason) => {
    const refused = await refusedReload(text);
    // pino's level 50 is `error`.
    expect(refused.level).toBe(50);
    expect(refused.err.message).toMatch(reason);
    await previousKeysHold();
    expect(service.lines.join('\n')).not.toContain('bob-admin-03f9');
  });

  it('revokes a key named as revoked, and every key when the file says !no-keys', async () => {
    keys.write({ billing: KEYS.billing }, ['bob']);
    await waitUntil(
      'bob to be revoked',
      async () => (await tasks(service, 'bob-admin-03f9')).status === 401,
      { timeoutMs: 15_000 },
    );
    expect((await tasks(service, 'billing-5e1a')).status).toBe(200);
    keys.write({});
    await waitUntil(
      'every key to be revoked',
      async () => (await tasks(service, 'billing-5e1a')).status === 401,
      { timeoutMs: 15_000 },
    );
  });
});

describe('authentication settings checked at start', () => {
  it('refuses to start on a key file without keys that does not say !no-keys', async () => {
    const keys = new KeyFile({});
    keys.writeText('# nothing yet\n');
    const service = await launchProcess({
      env: { AUTH_MODE: 'api-key', AUTH_API_KEYS_FILE: keys.path, CLUSTER_PROCESSES: '1' },
      readyPath: null,
    });
    expect((await service.exited).code).toBe(1);
    expect(service.lines.join('\n')).toMatch(/the file lists no keys/);
  });

  it('refuses to start on a key file that does not parse, naming the line', async () => {
    const keys = new KeyFile({});
    writeFileSync(keys.path, '# ok\nbilling:xyz\n');
    const service = await launchProcess({
      env: { AUTH_MODE: 'api-key', AUTH_API_KEYS_FILE: keys.path, CLUSTER_PROCESSES: '1' },
      readyPath: null,
    });
    expect((await service.exited).code).toBe(1);
    expect(service.lines.join('\n')).toMatch(/line 2: expected name:sha256hex/);
  });

  it('warns when it listens beyond loopback without authentication', async () => {
    const open = await startService({ CLUSTER_PROCESSES: '1', POOL_THREADS: '1', HOST: '0.0.0.0' });
    const local = await startService({ CLUSTER_PROCESSES: '1', POOL_THREADS: '1' });
    try {
      await open.waitForLine(/AUTH_MODE=none on a non-loopback address/);
      expect(local.lines.join('\n')).not.toContain('AUTH_MODE=none');
    } finally {
      await Promise.all([open.stop(), local.stop()]);
    }
  });
});
