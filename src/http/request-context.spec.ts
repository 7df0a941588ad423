import type { IncomingMessage } from 'node:http';
import Fastify from 'fastify';
import { nextRequestId, requestId, routeProfileOf } from './request-context';
import { decorateRequestState } from './request-state';
import { compileRouteProfile, profileIn, UNMATCHED_ROUTE } from './route-behaviour';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const withHeader = (value?: string) =>
  ({ headers: value === undefined ? {} : { 'x-request-id': value } }) as IncomingMessage;

describe('request ids', () => {
  it('made ones have the form of a version-4 UUID and never repeat', () => {
    const ids = Array.from({ length: 10_000 }, () => nextRequestId());
    for (const id of ids) expect(id).toMatch(UUID_V4);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('made ones differ from one process to the next: each draws its own random part', () => {
    // A second copy of the module, with state of its own, stands for another process.
    let other: typeof nextRequestId = nextRequestId;
    jest.isolateModules(() => {
      other = jest.requireActual<{ nextRequestId: typeof nextRequestId }>(
        './request-context',
      ).nextRequestId;
    });
    expect(other).not.toBe(nextRequestId);
    expect(other().slice(0, 24)).not.toBe(nextRequestId().slice(0, 24));
  });

  it('made ones get a fresh random prefix after 2^24, and keep their form across the turn', () => {
    // The tests before this one made ids already: find the turn within the next 2^24.
    let last = nextRequestId();
    let next = nextRequestId();
    for (let i = 0; i < 2 ** 24 && next.slice(0, 30) === last.slice(0, 30); i++) {
      last = next;
      next = nextRequestId();
    }
    expect(last).toMatch(UUID_V4);
    expect(next).toMatch(UUID_V4);
    expect(last.slice(30)).toBe('ffffff');
    expect(next.slice(30)).toBe('000000');
    expect(next.slice(0, 30)).not.toBe(last.slice(0, 30));
  });

  it('honours a safe incoming id and replaces an unsafe one', () => {
    expect(requestId(withHeader('trace-42.a:b_c'))).toBe('trace-42.a:b_c');
    expect(requestId(withHeader('has space'))).toMatch(UUID_V4);
    expect(requestId(withHeader('x'.repeat(129)))).toMatch(UUID_V4);
    expect(requestId(withHeader())).toMatch(UUID_V4);
  });
});

describe('the route profile', () => {
  // routeProfileOf reads Fastify's internal route context; this holds it to the public
  // `routeOptions`, so a Fastify upgrade that moves the context fails here.
  it('is the one `routeOptions.config` holds, for matched and unmatched requests', async () => {
    const fastify = Fastify();
    decorateRequestState(fastify);
    fastify.addHook('onRoute', compileRouteProfile);
    type Seen = { read: unknown; public: unknown };
    const seen: Seen[] = [];
    fastify.addHook('onRequest', (request, _reply, done) => {
      const { config, url } = request.routeOptions;
      seen.push({ read: routeProfileOf(request), public: profileIn(config as never, url) });
      done();
    });
    fastify.get('/things/:id', () => 'ok');
    try {
      await fastify.inject({ url: '/things/7' });
      await fastify.inject({ url: '/nowhere' });
    } finally {
      await fastify.close();
    }
    expect(seen).toHaveLength(2);
    const [matched, unmatched] = seen as [Seen, Seen];
    expect(matched.read).toBe(matched.public);
    expect(matched.read).toMatchObject({ template: '/things/:id' });
    expect(unmatched.read).toEqual(unmatched.public);
    expect(unmatched.read).toMatchObject({ template: UNMATCHED_ROUTE, access: 'authenticated' });
  });
});
