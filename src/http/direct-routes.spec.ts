import 'reflect-metadata';
import type { CanActivate, INestApplicationContext, NestInterceptor } from '@nestjs/common';
import {
  Catch,
  Controller,
  Module,
  Param,
  ParseBoolPipe,
  ParseIntPipe,
  Post,
  UseFilters,
  UseGuards,
  UseInterceptors,
  UsePipes,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import Fastify, { type FastifyInstance } from 'fastify';
import { Errors } from '../common/app-error';
import { directTaskRoutes } from '../compute/direct-task-routes';
import { directHealthRoutes } from '../health/direct-health-routes';
import {
  registerDirectRoutes,
  type DirectHandler,
  type DirectRoute,
  type DirectRoutes,
} from './direct-routes';
import { LeanFastifyAdapter } from './lean-fastify-adapter';
import { PROBLEM_CONTENT_TYPE } from './problem-details.filter';

/** A controller that declares nothing for Nest's pipeline. */
class PlainController {
  handle(): void {}
}

/** Direct routes declared on `PlainController`, by key. */
const plain = (handlers: Record<string, DirectHandler>): DirectRoutes =>
  new Map(
    Object.entries(handlers).map(([key, handler]) => [
      key,
      { controller: PlainController, method: 'handle', handler },
    ]),
  );

/** A Fastify app whose routes' own handlers answer `declared`, as Nest's would. */
async function appWith(direct: Record<string, DirectHandler>): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  registerDirectRoutes(app, plain(direct));
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
    registerDirectRoutes(lonely, plain({ 'POST /moved': () => ({}) }));
    lonely.post('/elsewhere', () => ({}));
    await expect(lonely.ready()).rejects.toThrow('No route declared for POST /moved');
  });
});

class DenyGuard implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

class TimingInterceptor implements NestInterceptor {
  intercept(): never {
    throw new Error('not called');
  }
}

@Catch()
class CatchAllFilter {}

class GuardedController {
  @UseGuards(DenyGuard)
  run(): void {}
}

@UseInterceptors(TimingInterceptor)
class InterceptedController {
  run(): void {}
}

class PipedController {
  @UsePipes(ParseBoolPipe)
  @UseFilters(CatchAllFilter)
  run(@Param('id', ParseIntPipe) _id: number): void {}
}

describe('registerDirectRoutes with Nest enhancers the direct call would skip', () => {
  const startWith = (routes: DirectRoutes) => () => registerDirectRoutes(Fastify(), routes);
  const route = (direct: DirectRoute): DirectRoutes => new Map([['POST /x', direct]]);

  it('refuses to start, naming the route, the method and the guard of a guarded method', () => {
    expect(
      startWith(route({ controller: GuardedController, method: 'run', handler: () => ({}) })),
    ).toThrow('POST /x (GuardedController.run) declares @UseGuards(DenyGuard)');
  });

  it('refuses an interceptor declared on the controller class', () => {
    expect(
      startWith(route({ controller: InterceptedController, method: 'run', handler: () => ({}) })),
    ).toThrow('POST /x (InterceptedController.run) declares @UseInterceptors(TimingInterceptor)');
  });

  it('refuses pipes and filters, on the method and on a parameter, all named at once', () => {
    expect(
      startWith(route({ controller: PipedController, method: 'run', handler: () => ({}) })),
    ).toThrow(
      'POST /x (PipedController.run) declares @UsePipes(ParseBoolPipe), ' +
        '@UseFilters(CatchAllFilter), pipes on parameter 0 (ParseIntPipe)',
    );
  });

  it("starts with corepool's own direct routes, whose controllers declare none", () => {
    // The handlers are never called here: only the controllers' metadata is read.
    const app = { get: () => ({}) } as unknown as INestApplicationContext;
    const routes = new Map([...directTaskRoutes(app), ...directHealthRoutes(app)]);
    expect([...routes.keys()]).toEqual([
      'POST /api/tasks/:name',
      'POST /api/compute',
      'GET /health/live',
    ]);
    expect(startWith(routes)).not.toThrow();
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
      const routes: DirectRoutes = new Map<string, DirectRoute>([
        [
          'POST /things/:name',
          {
            controller: ThingsController,
            method: 'thing',
            handler: (request) => ({ direct: (request.params as { name: string }).name }),
          },
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
