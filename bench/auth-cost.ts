/**
 * What authentication and quotas cost per request (issue 18; ADR 0014).
 *
 * 1. In process: what one `authenticate()` costs, µs per call, for an API key
 *    (a file of 100 keys) and an ES256 token (jose, local public key).
 * 2. The built service answers `GET /api/tasks` (the catalog, ~5 KB; no thread
 * involved, so the event loop's own work per request is what is measured)
 * under closed-loop load, once per configuration:
 *
 * - none: AUTH_MODE=none, no quotas (the reference);
 * - api-key: a file of 100 keys, each request hashed and compared with all;
 * - jwt: ES256 tokens against a local public key file (jose);
 * - api-key with quotas, one process: requests/s and tasks in flight counted here;
 * - api-key, two processes: the reference for the next one;
 * - api-key with quotas, two processes: counted in the cluster primary (IPC per request);
 * - api-key with quotas, Redis: requests/s counted in Redis.
 *
 * Quotas are set high enough never to refuse: the cost of counting is measured.
 * Each configuration runs ROUNDS times, in turn, to spread the machine's noise.
 * On a shared machine throughput follows the neighbours; the CPU time of the
 * event loops per request (the main threads of every process, the cluster
 * primary included, from /proc) is the steadier figure.
 *
 *   npx tsx bench/auth-cost.ts      # SECONDS=5 ROUNDS=2 CONNECTIONS=16; IN_PROCESS_ONLY=1: part 1
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import pino from 'pino';
import { ApiKeyAuthenticator } from '../src/auth/api-key-authenticator';
import { JwtAuthenticator } from '../src/auth/jwt-authenticator';
import { buildIfNeeded } from './lib/build';
import { startService } from './lib/servers';

const SECONDS = Number(process.env.SECONDS ?? 5);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 16);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Setup {
  readonly name: string;
  readonly env: Record<string, string>;
  readonly headers: Record<string, string>;
}

async function setups(): Promise<Setup[]> {
  const dir = mkdtempSync(join(tmpdir(), 'corepool-auth-bench-'));
  const keysFile = join(dir, 'api-keys');
  const sha = (key: string) => createHash('sha256').update(key).digest('hex');
  const lines = Array.from({ length: 100 }, (_, i) => `client-${i}:${sha(`key-${i}`)}`);
  writeFileSync(keysFile, `${lines.join('\n')}\n`);
  const apiKey = { AUTH_MODE: 'api-key', AUTH_API_KEYS_FILE: keysFile };
  // The last key of the file: every digest is compared anyway.
  const keyHeader = { 'x-api-key': 'key-99' };

  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const publicKeyFile = join(dir, 'idp.pem');
  writeFileSync(publicKeyFile, await exportSPKI(publicKey));
  const token = await new SignJWT({ sub: 'billing', scope: 'tasks:run' })
    .setProtectedHeader({ alg: 'ES256' })
    .setIssuer('https://idp.bench')
    .setAudience('corepool')
    .setExpirationTime('1h')
    .sign(privateKey);

  const base = { CLUSTER_WORKERS: '1', POOL_THREADS: '1', LOG_LEVEL: 'warn' };
  const quotas = { QUOTA_REQUESTS_PER_SECOND: '1000000', QUOTA_TASKS_IN_FLIGHT: '1000000' };
  return [
    { name: 'none', env: base, headers: {} },
    { name: 'api-key', env: { ...base, ...apiKey }, headers: keyHeader },
    {
      name: 'jwt',
      env: {
        ...base,
        AUTH_MODE: 'jwt',
        AUTH_JWT_PUBLIC_KEY_FILE: publicKeyFile,
        AUTH_JWT_ISSUER: 'https://idp.bench',
        AUTH_JWT_AUDIENCE: 'corepool',
      },
      headers: { authorization: `Bearer ${token}` },
    },
    {
      name: 'api-key + quotas, 1 process',
      env: { ...base, ...apiKey, ...quotas },
      headers: keyHeader,
    },
    {
      name: 'api-key, 2 processes',
      env: { ...base, ...apiKey, CLUSTER_WORKERS: '2' },
      headers: keyHeader,
    },
    {
      name: 'api-key + quotas, 2 processes (primary)',
      env: { ...base, ...apiKey, ...quotas, CLUSTER_WORKERS: '2' },
      headers: keyHeader,
    },
    {
      name: 'api-key + quotas, Redis',
      env: { ...base, ...apiKey, ...quotas, REDIS_URL, JOBS_QUEUE_PREFIX: `bench-${process.pid}` },
      headers: keyHeader,
    },
  ];
}

function load(url: string, headers: Record<string, string>, seconds: number) {
  return new Promise<autocannon.Result>((done, fail) => {
    autocannon(
      { url: `${url}/api/tasks`, headers, connections: CONNECTIONS, duration: seconds },
      (error: Error | null, result: autocannon.Result) =>
        error === null ? done(result) : fail(error),
    );
  });
}

/** µs per call of `authenticate`, after a warm-up, best of three batches. */
async function perCall(authenticate: () => unknown, calls: number): Promise<number> {
  const batches: number[] = [];
  for (let batch = 0; batch < 4; batch++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await authenticate();
    batches.push(Number(process.hrtime.bigint() - started) / 1000 / calls);
  }
  return Math.min(...batches.slice(1));
}

async function inProcess(all: Setup[]): Promise<void> {
  const log = pino({ enabled: false });
  const apiKey = all.find((setup) => setup.name === 'api-key')!;
  const keys = new ApiKeyAuthenticator(apiKey.env.AUTH_API_KEYS_FILE!, ['tasks:run'], log);
  const jwt = all.find((setup) => setup.name === 'jwt')!;
  const tokens = new JwtAuthenticator(
    {
      jwksUrl: undefined,
      publicKeyFile: jwt.env.AUTH_JWT_PUBLIC_KEY_FILE,
      issuer: jwt.env.AUTH_JWT_ISSUER,
      audience: jwt.env.AUTH_JWT_AUDIENCE,
      clockSkewSeconds: 30,
      clientClaim: 'sub',
      scopesClaim: 'scope',
      jwksCooldownMs: 30_000,
      requireExp: true,
      maxTokenAgeSeconds: undefined,
    },
    ['tasks:run'],
    log,
  );
  const keyMicros = await perCall(() => keys.authenticate(apiKey.headers), 50_000);
  const tokenMicros = await perCall(() => tokens.authenticate(jwt.headers), 5_000);
  keys.close();
  console.log(
    `in process: api-key ${keyMicros.toFixed(1)} µs/call, jwt ${tokenMicros.toFixed(1)} µs/call`,
  );
}

async function main(): Promise<void> {
  buildIfNeeded((line) => console.log(line));
  const all = await setups();
  await inProcess(all);
  if (process.env.IN_PROCESS_ONLY === '1') return;
  const results = new Map<string, { rps: number[]; p99: number[]; cpu: number[] }>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const setup of all) {
      const server = await startService(setup.name, setup.env);
      try {
        await load(server.url, setup.headers, 2);
        const cpuBefore = server.mainThreadCpuMicros();
        const result = await load(server.url, setup.headers, SECONDS);
        const cpuMicros = server.mainThreadCpuMicros() - cpuBefore;
        if (result.non2xx > 0) throw new Error(`${setup.name}: ${result.non2xx} non-2xx answers`);
        const entry = results.get(setup.name) ?? { rps: [], p99: [], cpu: [] };
        entry.cpu.push(cpuMicros / result.requests.total);
        entry.rps.push(result.requests.average);
        entry.p99.push(result.latency.p99);
        results.set(setup.name, entry);
        console.log(
          `round ${round + 1} ${setup.name}: ${result.requests.average} req/s, ${entry.cpu.at(-1)!.toFixed(0)} µs CPU/request`,
        );
      } finally {
        await server.stop();
      }
    }
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const reference = results.get('none')!;
  console.log(
    '\n| configuration | event-loop CPU µs/request | vs none | req/s | vs none | p99 ms |\n' +
      '| --- | --- | --- | --- | --- | --- |',
  );
  for (const [name, { rps, p99, cpu }] of results) {
    const cpuRatio = (mean(cpu) / mean(reference.cpu)).toFixed(2);
    const rpsRatio = (mean(rps) / mean(reference.rps)).toFixed(2);
    console.log(
      `| ${name} | ${mean(cpu).toFixed(0)} | ${cpuRatio} | ${Math.round(mean(rps))} | ${rpsRatio} | ${mean(p99).toFixed(1)} |`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
