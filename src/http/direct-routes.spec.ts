import { Controller, Module, Param, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import Fastify, { type FastifyInstance } from 'fastify';
import { Errors } from '../common/app-error';
import { registerDirectRoutes, type DirectHandler } from './direct-routes';
import { LeanFastifyAdapter } from './lean-fastify-adapter';
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

@Controller('things')
class ThingsController {
  @Post(':name')
  thing(@Param('name') name: string): object {
    return { declared: name };
  }
}

@Module({ controllers: [ThingsController] })
class ThingsModule {}

/** What direct routes take from Nest's adapter: the route as its controller declares it. */
describe("registerDirectRoutes on Nest's Fastify adapter", () => {
  it("takes over a controller's route by its template, and not-found is Nest's answer to an empty parameter", async () => {
    const nest = async (direct: boolean) => {
      const app = await NestFactory.create<NestFastifyApplication>(
        ThingsModule,
        new LeanFastifyAdapter({ skipMiddie: true }),
        { logger: false },
      );
      const routes = new Map<string, DirectHandler>([
        [
          'POST /things/:name',
          (request) => ({ direct: (request.params as { name: string }).name }),
        ],
      ]);
      if (direct) registerDirectRoutes(app.getHttpAdapter().getInstance(), routes);
      await app.init();
      return app;
    };
    const [declared, taken] = [await nest(false), await nest(true)];
    try {
      const post = (app: NestFastifyApplication, url: string) =>
        app.getHttpAdapter().getInstance().inject({ method: 'POST', url });
      expect((await post(declared, '/things/a')).json()).toEqual({ declared: 'a' });
      expect((await post(taken, '/things/a')).json()).toEqual({ direct: 'a' });
      const [nestEmpty, directEmpty] = [
        await post(declared, '/things/'),
        await post(taken, '/things/'),
      ];
      expect(nestEmpty.statusCode).toBe(404);
      expect(directEmpty.statusCode).toBe(nestEmpty.statusCode);
    } finally {
      await declared.close();
      await taken.close();
    }
  });
});
