import Fastify from 'fastify';
import { decorateRequestState } from './request-state';

describe(decorateRequestState.name, () => {
  it('gives each request its own state, with the defaults until set', async () => {
    const app = Fastify();
    decorateRequestState(app);
    const seen: unknown[] = [];
    app.get('/', (request) => {
      seen.push([
        request.arrivedAt,
        request.identity,
        request.releaseTaskSlot,
        request.bodyHolding,
      ]);
      request.arrivedAt = 42;
      request.identity = { id: 'a', scopes: new Set(), authenticated: true };
      return { arrivedAt: request.arrivedAt, id: request.identity.id };
    });
    const first = await app.inject({ url: '/' });
    const second = await app.inject({ url: '/' });
    expect(first.json()).toEqual({ arrivedAt: 42, id: 'a' });
    expect(second.json()).toEqual({ arrivedAt: 42, id: 'a' });
    // The second request started from the defaults, not from what the first one set.
    expect(seen).toEqual([
      [0, null, null, null],
      [0, null, null, null],
    ]);
    await app.close();
  });

  it('adds one own property per request, whatever the accessors hold', async () => {
    const app = Fastify();
    decorateRequestState(app);
    let own: string[] = [];
    app.get('/', (request) => {
      const before = Object.keys(request);
      request.routeProfile = null;
      request.bodyHolding = null;
      own = Object.keys(request).filter((key) => !before.includes(key));
      return Object.keys(request).includes('corepoolState');
    });
    expect((await app.inject({ url: '/' })).json()).toBe(true);
    expect(own).toEqual([]);
    await app.close();
  });
});
