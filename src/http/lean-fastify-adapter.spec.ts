import { Controller, Get, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import { LeanFastifyAdapter, NEST_ADAPTER_HOOKS } from './lean-fastify-adapter';

@Controller()
class PingController {
  @Get('ping')
  ping(): object {
    return { pong: true };
  }
}

@Module({ controllers: [PingController] })
class PingModule {}

/** A Nest app on `adapter` with one hook of each kind of its own, and the hooks its route runs. */
async function appOn(adapter: FastifyAdapter): Promise<{
  app: INestApplication;
  fastify: FastifyInstance;
  hooks: string;
}> {
  const app = await NestFactory.create<NestFastifyApplication>(PingModule, adapter, {
    logger: false,
  });
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRequest', function ownRequestHook(_request, _reply, done) {
    done();
  });
  fastify.addHook('onResponse', function ownResponseHook(_request, _reply, done) {
    done();
  });
  await app.init();
  // Each route gets its hooks once Fastify has loaded its plugins.
  await fastify.ready();
  return { app, fastify, hooks: fastify.printRoutes({ includeHooks: true }) };
}

/** How many hooks of `kind` the printed route tree lists for its one route. */
const countOf = (printed: string, kind: string) =>
  (new RegExp(`• \\(${kind}\\) \\[([^\\]]*)\\]`).exec(printed)?.[1] ?? '')
    .split(',')
    .filter((name) => name.trim() !== '').length;

describe('LeanFastifyAdapter', () => {
  it("runs a route with the app's own hooks only, where Nest's adapter adds its own to every route", async () => {
    const nest = await appOn(new FastifyAdapter({ skipMiddie: true }));
    const lean = await appOn(new LeanFastifyAdapter({ skipMiddie: true }));
    try {
      expect(countOf(nest.hooks, 'onRequest')).toBe(1 + NEST_ADAPTER_HOOKS.onRequest);
      expect(countOf(nest.hooks, 'onResponse')).toBe(1 + NEST_ADAPTER_HOOKS.onResponse);
      expect(countOf(lean.hooks, 'onRequest')).toBe(1);
      expect(countOf(lean.hooks, 'onResponse')).toBe(1);
      expect(lean.hooks).toContain('ownRequestHook');
      expect(lean.hooks).toContain('ownResponseHook');

      const answer = await lean.fastify.inject({ url: '/ping' });
      expect(answer.json()).toEqual({ pong: true });
      // A target no route could match still gets the not-found handler.
      expect((await lean.fastify.inject({ url: '/nowhere' })).statusCode).toBe(404);
    } finally {
      await nest.app.close();
      await lean.app.close();
    }
  });

  it("keeps hooks added after it is constructed, and a plugin's hooks its own", async () => {
    const adapter = new LeanFastifyAdapter({ skipMiddie: true });
    const calls: string[] = [];
    const root = adapter.getInstance();
    root.addHook('onRequest', (_request, _reply, done) => {
      calls.push('root');
      done();
    });
    void root.register((plugin, _options, registered) => {
      plugin.addHook('onRequest', (_request, _reply, done) => {
        calls.push('plugin');
        done();
      });
      plugin.get('/inner', () => ({ inner: true }));
      registered();
    });
    const { app, fastify } = await appOn(adapter);
    try {
      await fastify.inject({ url: '/ping' });
      expect(calls).toEqual(['root']);
      calls.length = 0;
      expect((await fastify.inject({ url: '/inner' })).json()).toEqual({ inner: true });
      expect(calls).toEqual(['root', 'plugin']);
    } finally {
      await app.close();
    }
  });

  it('refuses the features whose hooks it leaves out', () => {
    const adapter = new LeanFastifyAdapter({ skipMiddie: true });
    expect(() => adapter.enableCors()).toThrow('CORS is not wired in');
    expect(() => adapter.setOnRequestHook()).toThrow('not wired in');
    expect(() => adapter.setOnResponseHook()).toThrow('not wired in');
    expect(() => adapter.registerSecurityHook()).toThrow('security headers and CSRF');
    expect(() => adapter.initHttpServer({ return503OnClosing: true })).toThrow(
      'return503OnClosing is not wired in',
    );
  });

  it("refuses Nest's security headers and a 503 on closing when the app asks for them", async () => {
    const secured = await NestFactory.create<NestFastifyApplication>(
      PingModule,
      new LeanFastifyAdapter({ skipMiddie: true }),
      { logger: false, abortOnError: false },
    );
    try {
      expect(() => secured.useSecurityHeaders()).toThrow('security headers and CSRF');
    } finally {
      await secured.close();
    }
    await expect(
      NestFactory.create(PingModule, new LeanFastifyAdapter({ skipMiddie: true }), {
        logger: false,
        abortOnError: false,
        return503OnClosing: true,
      }),
    ).rejects.toThrow('return503OnClosing is not wired in');
  });
});
