import Fastify, { type FastifyInstance } from 'fastify';
import { Errors } from '../common/app-error';
import { registerDirectRoutes, type DirectHandler } from './direct-routes';
import { PROBLEM_CONTENT_TYPE } from './problem-details.filter';

/** A Fastify app whose routes' own handlers answer `declared`, as Nest's would. */
async function appWith(direct: Record<string, DirectHandler>): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  registerDirectRoutes(app, new Map(Object.entries(direct)));
  for (const url of ['/things/:name', '/fixed', '/failing', '/crashing', '/late']) {
    app.post(url, () => ({ declared: true }));
  }
  app.get('/untouched', () => ({ declared: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app;
}

const urlOf = (app: FastifyInstance, path: string) => {
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening');
  return `http://127.0.0.1:${address.port}${path}`;
};

describe('registerDirectRoutes (real HTTP)', () => {
  let app: FastifyInstance;

  beforeAll(async () => {
    app = await appWith({
      'POST /things/:name': (request) =>
        Promise.resolve({ name: (request.params as { name: string }).name }),
      'POST /fixed': () => ({ fixed: 1 }),
      'POST /failing': () => Promise.reject(Errors.taskNotFound('nope')),
      'POST /crashing': () => {
        throw Errors.validationFailed('bad', [{ property: 'x', messages: ['x is bad'] }]);
      },
      'POST /late': (_request, reply) => {
        void reply.code(202).send({ sentByHandler: true });
        return Promise.resolve({ ignored: true });
      },
    });
  });

  afterAll(() => app.close());

  it('calls the direct handler instead of the declared one, for the named routes only', async () => {
    const thing = await fetch(urlOf(app, '/things/a'), { method: 'POST' });
    expect(await thing.json()).toEqual({ name: 'a' });
    const fixed = await fetch(urlOf(app, '/fixed'), { method: 'POST' });
    expect(fixed.status).toBe(200);
    expect(await fixed.json()).toEqual({ fixed: 1 });
    const untouched = await fetch(urlOf(app, '/untouched'));
    expect(await untouched.json()).toEqual({ declared: true });
  });

  it('answers a rejected or thrown AppError as problem+json with its code', async () => {
    const failing = await fetch(urlOf(app, '/failing'), { method: 'POST' });
    expect(failing.status).toBe(404);
    expect(failing.headers.get('content-type')).toContain(PROBLEM_CONTENT_TYPE);
    expect(await failing.json()).toMatchObject({ code: 'TASK_NOT_FOUND', instance: '/failing' });
    const crashing = await fetch(urlOf(app, '/crashing'), { method: 'POST' });
    expect(crashing.status).toBe(400);
    expect(await crashing.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [{ property: 'x', messages: ['x is bad'] }],
    });
  });

  it('passes a request with an empty route parameter to the not-found handler, as Nest does', async () => {
    const empty = await fetch(urlOf(app, '/things/'), { method: 'POST' });
    expect(empty.status).toBe(404);
  });

  it('leaves a reply the handler sent itself as it is', async () => {
    const late = await fetch(urlOf(app, '/late'), { method: 'POST' });
    expect(late.status).toBe(202);
    expect(await late.json()).toEqual({ sentByHandler: true });
  });

  it('refuses to start when a direct route has no declared route', async () => {
    const lonely = Fastify({ logger: false });
    registerDirectRoutes(lonely, new Map([['POST /moved', () => ({})]]));
    lonely.post('/elsewhere', () => ({}));
    await expect(lonely.ready()).rejects.toThrow('No route declared for POST /moved');
  });
});
