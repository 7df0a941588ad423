import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportSPKI, UnsecuredJWT } from 'jose';
import {
  AUDIENCE,
  ISSUER,
  JwksServer,
  KeyFile,
  signingKey,
  token,
  type SigningKey,
} from './support/credentials';
import { startApp, type RunningApp } from './support/http-app';
import { waitUntil } from './support/poll';

jest.setTimeout(60_000);

/** Long enough that many requests fall within it on a busy machine. */
const COOLDOWN_MS = 5_000;
const now = () => Math.floor(Date.now() / 1000);

/** A route that needs `tasks:run`, with a valid body. */
const runTask = (app: RunningApp, headers: Record<string, string>) =>
  fetch(`${app.url}/api/tasks/factorial`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: '{"n":5}',
  });
const bearer = (jwt: string) => ({ authorization: `Bearer ${jwt}` });

async function refusal(response: Response) {
  expect(response.status).toBe(401);
  expect(response.headers.get('www-authenticate')).toBe('Bearer realm="corepool"');
  return ((await response.json()) as { code: string; detail: string }).detail;
}

describe('AUTH_MODE=jwt against a JWKS URL (real keys, real tokens, a local JWKS server)', () => {
  const jwks = new JwksServer();
  let first: SigningKey;
  let app: RunningApp;

  beforeAll(async () => {
    first = await signingKey('key-1');
    jwks.keys = [first.publicJwk];
    app = await startApp({
      AUTH_MODE: 'jwt',
      AUTH_JWT_JWKS_URL: await jwks.start(),
      AUTH_JWT_ISSUER: ISSUER,
      AUTH_JWT_AUDIENCE: AUDIENCE,
      AUTH_JWT_CLOCK_SKEW_S: '30',
      AUTH_JWT_JWKS_COOLDOWN_MS: String(COOLDOWN_MS),
    });
  });
  afterAll(async () => {
    await app.close();
    await jwks.stop();
  });

  it('accepts a valid token, and refuses one whose scopes do not cover the route', async () => {
    expect((await runTask(app, bearer(await token(first)))).status).toBe(200);
    const readOnly = await runTask(app, bearer(await token(first, { scope: 'jobs:read' })));
    expect(readOnly.status).toBe(403);
    expect(await readOnly.json()).toMatchObject({ code: 'FORBIDDEN' });
    const admin = await fetch(`${app.url}/metrics`, {
      headers: bearer(await token(first, { scope: 'admin' })),
    });
    expect(admin.status).toBe(200);
  });

  it('refuses missing and malformed credentials; an API key header is no token', async () => {
    await refusal(await runTask(app, {}));
    await refusal(await runTask(app, bearer('not-a-token')));
    await refusal(await runTask(app, bearer('a.b.c')));
    await refusal(await runTask(app, { 'x-api-key': await token(first) }));
    const unsigned = new UnsecuredJWT({ sub: 'billing', scope: 'tasks:run' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .encode();
    await refusal(await runTask(app, bearer(unsigned)));
  });

  it('checks exp and nbf with the clock skew, and says so', async () => {
    expect(
      await refusal(await runTask(app, bearer(await token(first, { exp: now() - 120 })))),
    ).toMatch(/expired/);
    // 10 s late is within the 30 s skew.
    expect((await runTask(app, bearer(await token(first, { exp: now() - 10 })))).status).toBe(200);
    await refusal(await runTask(app, bearer(await token(first, { nbf: now() + 120 }))));
    expect((await runTask(app, bearer(await token(first, { nbf: now() + 10 })))).status).toBe(200);
  });

  it('refuses a token without exp, and one issued in the future beyond the clock skew', async () => {
    expect(
      await refusal(await runTask(app, bearer(await token(first, { exp: undefined })))),
    ).toMatch(/lacks a required claim/);
    const yearAhead = now() + 365 * 86_400;
    expect(
      await refusal(
        await runTask(app, bearer(await token(first, { iat: yearAhead, exp: yearAhead + 300 }))),
      ),
    ).toMatch(/issued in the future/);
    // 10 s ahead is within the 30 s skew.
    expect((await runTask(app, bearer(await token(first, { iat: now() + 10 })))).status).toBe(200);
  });

  it('refuses another audience, another issuer, and a token without its client claim', async () => {
    expect(
      await refusal(await runTask(app, bearer(await token(first, { aud: 'another-service' })))),
    ).toMatch(/not for this service/);
    await refusal(await runTask(app, bearer(await token(first, { iss: 'https://evil.test' }))));
    await refusal(await runTask(app, bearer(await token(first, { sub: undefined }))));
  });

  it('refetches the JWKS for an unknown kid (at most once per cooldown), then trusts a published key', async () => {
    const second = await signingKey('key-2');
    const before = jwks.fetches;
    // Asked until the service fetches: the cooldown of the fetch for the earlier tokens may still run.
    await waitUntil(
      'a refetch for the unknown kid',
      async () => {
        await refusal(await runTask(app, bearer(await token(second))));
        return jwks.fetches > before;
      },
      { timeoutMs: 2 * COOLDOWN_MS + 10_000, intervalMs: 100 },
    );
    expect(jwks.fetches).toBe(before + 1);
    // Within the cooldown an unknown kid does not make the service fetch again.
    await refusal(await runTask(app, bearer(await token(second))));
    expect(jwks.fetches).toBe(before + 1);

    // The provider rotates: the new key is published, the old one stays for tokens in flight.
    // Its tokens are refused until the cooldown ends, then one fetch trusts it.
    jwks.keys = [first.publicJwk, second.publicJwk];
    let refusedMeanwhile = 0;
    await waitUntil(
      'the new key to be trusted',
      async () => {
        const response = await runTask(app, bearer(await token(second)));
        if (response.status === 200) return true;
        await refusal(response);
        refusedMeanwhile += 1;
        return false;
      },
      { timeoutMs: COOLDOWN_MS + 10_000, intervalMs: 100 },
    );
    expect(refusedMeanwhile).toBeGreaterThan(0);
    expect(jwks.fetches).toBe(before + 2);
    expect((await runTask(app, bearer(await token(first)))).status).toBe(200);
  });

  it('refuses a token signed by another key under a known kid', async () => {
    const forger = await signingKey('key-1');
    await refusal(await runTask(app, bearer(await token(forger))));
  });
});

/** The app in `jwt` mode against `key`'s public key in a PEM file. */
async function withPublicKey(key: SigningKey, env: Record<string, string>): Promise<RunningApp> {
  const publicKeyFile = join(new KeyFile({}).dir, 'idp.pem');
  writeFileSync(publicKeyFile, await exportSPKI(key.publicKey));
  return startApp({
    AUTH_MODE: 'jwt',
    AUTH_JWT_PUBLIC_KEY_FILE: publicKeyFile,
    AUTH_JWT_ISSUER: ISSUER,
    AUTH_JWT_AUDIENCE: AUDIENCE,
    ...env,
  });
}

describe('AUTH_MODE=jwt against a local public key file, scopes as an array claim', () => {
  let key: SigningKey;
  let app: RunningApp;

  beforeAll(async () => {
    key = await signingKey('local');
    app = await withPublicKey(key, {
      AUTH_JWT_SCOPES_CLAIM: 'scp',
      AUTH_JWT_CLIENT_CLAIM: 'client_id',
    });
  });
  afterAll(() => app.close());

  it('reads the client from the configured claim and the scopes from an array', async () => {
    const claims = { client_id: 'auth0|5f7c8ec7c33c6c004bbafe82', scope: undefined };
    expect(
      (await runTask(app, bearer(await token(key, { ...claims, scp: ['tasks:run'] })))).status,
    ).toBe(200);
    expect(
      (await runTask(app, bearer(await token(key, { ...claims, scp: ['jobs:read'] })))).status,
    ).toBe(403);
    await refusal(await runTask(app, bearer(await token(key, { scp: ['tasks:run'] }))));
  });

  it('refuses a token of another key', async () => {
    const other = await signingKey('local');
    await refusal(
      await runTask(app, bearer(await token(other, { client_id: 'billing', scp: ['tasks:run'] }))),
    );
  });
});

describe('AUTH_MODE=jwt with a maximum token age, exp optional', () => {
  let key: SigningKey;
  let app: RunningApp;

  beforeAll(async () => {
    key = await signingKey('local');
    app = await withPublicKey(key, {
      AUTH_JWT_REQUIRE_EXP: 'false',
      AUTH_JWT_MAX_TOKEN_AGE_S: '600',
    });
  });
  afterAll(() => app.close());

  it('accepts a fresh token without exp; refuses one older than the maximum, or without iat', async () => {
    expect((await runTask(app, bearer(await token(key, { exp: undefined })))).status).toBe(200);
    // A long exp does not outlive the maximum age.
    const old = { iat: now() - 700, exp: now() + 86_400 };
    expect(await refusal(await runTask(app, bearer(await token(key, old))))).toMatch(/expired/);
    expect(await refusal(await runTask(app, bearer(await token(key, { iat: undefined }))))).toMatch(
      /lacks a required claim/,
    );
    await refusal(await runTask(app, bearer(await token(key, { iat: now() + 120 }))));
  });
});

describe('AUTH_MODE=jwt while the JWKS cannot be fetched', () => {
  let app: RunningApp;

  beforeAll(async () => {
    const jwks = new JwksServer();
    const url = await jwks.start();
    await jwks.stop(); // nothing listens there any more
    app = await startApp({
      AUTH_MODE: 'jwt',
      AUTH_JWT_JWKS_URL: url,
      AUTH_JWT_ISSUER: ISSUER,
      AUTH_JWT_AUDIENCE: AUDIENCE,
    });
  });
  afterAll(() => app.close());

  it('refuses tokens with 401 (not 500), and the probes still answer', async () => {
    const key = await signingKey('key-1');
    await refusal(await runTask(app, bearer(await token(key))));
    expect((await fetch(`${app.url}/health/ready`)).status).toBe(200);
  });
});
