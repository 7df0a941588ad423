import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Scope } from '../src/auth/scopes';
import { KeyFile } from './support/credentials';
import { rawExchange, rawRequest } from './support/raw-http';
import { startApp, type RunningApp } from './support/http-app';

jest.setTimeout(60_000);

const NO_SUCH_JOB = { status: 404, code: 'JOB_NOT_FOUND' };

/**
 * Every route, with what it needs, a request past authentication, and how a
 * caller allowed to make it is answered (a job that does not exist: the route
 * ran and looked for it).
 */
const ROUTES: ReadonlyArray<{
  readonly route: string;
  readonly path: string;
  readonly access: 'public' | 'authenticated' | Scope;
  readonly body?: unknown;
  readonly answer?: { readonly status: number; readonly code?: string };
}> = [
  { route: 'GET /health/live', path: '/health/live', access: 'public' },
  { route: 'GET /health/ready', path: '/health/ready', access: 'public' },
  { route: 'GET /health', path: '/health', access: Scope.ADMIN },
  { route: 'GET /metrics', path: '/metrics', access: Scope.ADMIN },
  { route: 'GET /docs', path: '/docs-json', access: 'authenticated' },
  { route: 'GET /api/tasks', path: '/api/tasks', access: 'authenticated' },
  {
    route: 'POST /api/tasks/:name',
    path: '/api/tasks/factorial',
    access: Scope.TASKS_RUN,
    body: { n: 5 },
  },
  {
    route: 'POST /api/compute',
    path: '/api/compute',
    access: Scope.TASKS_RUN,
    body: { iterations: 10 },
  },
  {
    route: 'POST /api/jobs',
    path: '/api/jobs',
    access: Scope.JOBS_WRITE,
    body: { task: 'factorial', input: { n: 5 } },
    answer: { status: 202 },
  },
  { route: 'GET /api/jobs', path: '/api/jobs', access: Scope.JOBS_READ },
  {
    route: 'GET /api/jobs/:id',
    path: '/api/jobs/no-such-job',
    access: Scope.JOBS_READ,
    answer: NO_SUCH_JOB,
  },
  {
    route: 'GET /api/jobs/:id/events',
    path: '/api/jobs/no-such-job/events',
    access: Scope.JOBS_READ,
    answer: NO_SUCH_JOB,
  },
  {
    route: 'DELETE /api/jobs/:id',
    path: '/api/jobs/no-such-job',
    access: Scope.JOBS_WRITE,
    answer: NO_SUCH_JOB,
  },
];

const KEYS = {
  runner: { key: 'runner-key-7f3a', scopes: [Scope.TASKS_RUN] },
  reader: { key: 'reader-key-91c2', scopes: [Scope.JOBS_READ] },
  // No scopes listed: AUTH_DEFAULT_SCOPES (tasks:run jobs:read jobs:write).
  standard: { key: 'standard-key-5d08' },
  ops: { key: 'ops-key-c44e', scopes: [Scope.ADMIN] },
};
const DEFAULT_SCOPES = [Scope.TASKS_RUN, Scope.JOBS_READ, Scope.JOBS_WRITE];

function call(app: RunningApp, route: (typeof ROUTES)[number], headers: Record<string, string>) {
  const method = route.route.split(' ')[0]!;
  return fetch(`${app.url}${route.path}`, {
    method,
    headers:
      route.body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: route.body === undefined ? undefined : JSON.stringify(route.body),
  });
}

describe('AUTH_MODE=api-key (in-process app, real HTTP, real key file)', () => {
  const keyFile = new KeyFile(KEYS);
  let app: RunningApp;

  beforeAll(async () => {
    app = await startApp({ AUTH_MODE: 'api-key', AUTH_API_KEYS_FILE: keyFile.path });
  });
  afterAll(() => app.close());

  it('lists every documented route here', () => {
    const api = readFileSync(resolve(__dirname, '../docs/api.md'), 'utf8');
    const section = api.split(/^## Routes$/m)[1]?.split(/^## /m)[0] ?? '';
    const documented = [...section.matchAll(/^\| `([A-Z]+ \/[^`]*)`/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual(ROUTES.map((route) => route.route).sort());
  });

  it.each(ROUTES.filter((route) => route.access !== 'public'))(
    '$route: 401 UNAUTHENTICATED with WWW-Authenticate without credentials',
    async (route) => {
      const attempts: Record<string, string>[] = [
        {},
        { authorization: 'Basic cnVubmVyOnJ1bm5lci1rZXk=' },
        { authorization: 'Bearer' },
        { 'x-api-key': '' },
      ];
      for (const headers of attempts) {
        const response = await call(app, route, headers);
        expect(response.status).toBe(401);
        expect(response.headers.get('www-authenticate')).toBe('Bearer realm="corepool"');
        expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(await response.json()).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
      }
    },
  );

  it.each(ROUTES.filter((route) => route.access === 'public'))(
    '$route: open to anyone, credentials or not',
    async (route) => {
      expect((await call(app, route, {})).status).toBe(200);
      expect((await call(app, route, { 'x-api-key': 'wrong' })).status).toBe(200);
    },
  );

  it.each(ROUTES.filter((route) => route.access !== 'public'))(
    '$route: each key by its scopes, as x-api-key or Bearer',
    async (route) => {
      for (const [name, { key, ...rest }] of Object.entries(KEYS)) {
        const scopes: string[] = 'scopes' in rest ? rest.scopes : DEFAULT_SCOPES;
        const allowed =
          route.access === 'authenticated' ||
          scopes.includes(route.access) ||
          scopes.includes(Scope.ADMIN);
        const ways: Record<string, string>[] = [
          { 'x-api-key': key },
          { authorization: `Bearer ${key}` },
        ];
        for (const headers of ways) {
          const response = await call(app, route, headers);
          const body = await response.text();
          if (allowed) {
            // The key's name in the message says which key a failure is about.
            const { status, code } = route.answer ?? { status: 200 };
            expect({ name, status: response.status }).toEqual({ name, status });
            if (code !== undefined) expect(JSON.parse(body)).toMatchObject({ code });
          } else {
            expect({ name, status: response.status }).toEqual({ name, status: 403 });
            expect(JSON.parse(body)).toMatchObject({ code: 'FORBIDDEN' });
          }
        }
      }
    },
  );

  it('answers an unknown key exactly as a missing one: nothing says whether a key exists', async () => {
    const route = ROUTES.find((r) => r.route === 'GET /api/tasks')!;
    const missing = await call(app, route, {});
    const unknown = await call(app, route, { 'x-api-key': 'runner-key-7f3b' });
    const nearName = await call(app, route, { 'x-api-key': 'runner' });
    const bodies = await Promise.all([missing, unknown, nearName].map((r) => r.json()));
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);
  });

  it('refuses a caller without credentials before its body is read: 401, not 413', async () => {
    const port = Number(new URL(app.url).port);
    // Announces 512 MiB and sends a few bytes: the answer comes without waiting for the rest.
    const { statuses, closed } = await rawExchange(
      port,
      [
        rawRequest('POST', '/api/tasks/factorial', {
          'content-type': 'application/json',
          'content-length': String(512 * 1024 * 1024),
        }),
        '{"n":',
      ],
      { waitMs: 10_000 },
    );
    expect(statuses).toEqual([401]);
    // The connection is closed after the answer: the rest of the body is never read.
    expect(closed).toBe(true);
  });

  it('an unmatched route needs credentials too, then is 404', async () => {
    expect((await fetch(`${app.url}/no/such/route`)).status).toBe(401);
    const found = await fetch(`${app.url}/no/such/route`, {
      headers: { 'x-api-key': KEYS.ops.key },
    });
    expect(found.status).toBe(404);
  });
});
