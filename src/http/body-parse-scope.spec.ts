import { AsyncResource } from 'node:async_hooks';
import { LeanFastifyAdapter } from './lean-fastify-adapter';

/**
 * Fastify 5.11 bound each request's body-parser callback with
 * `AsyncResource#bind`, whose wrapper kept the request's objects alive
 * through a scavenge: 4-10 MB copied per scavenge at 250 POSTs/s, pauses of
 * 13-35 ms (ADR 0035). The Fastify that Nest's adapter runs must not. This
 * fails if the npm override that gives it Fastify 5.12 is dropped while Nest
 * 11's adapter still pins 5.11.
 */
describe("the Fastify of Nest's adapter, parsing a body", () => {
  it('does not wrap the parser callback with AsyncResource#bind', async () => {
    const fastify = new LeanFastifyAdapter({ skipMiddie: true }).getInstance();
    fastify.post('/echo', (request, reply) => {
      void reply.send(request.body);
    });
    const bind = jest.spyOn(AsyncResource.prototype, 'bind');
    try {
      const response = await fastify.inject({ method: 'POST', url: '/echo', payload: { n: 1 } });
      expect(response.json()).toEqual({ n: 1 });
      expect(bind).not.toHaveBeenCalled();
    } finally {
      bind.mockRestore();
      await fastify.close();
    }
  });
});
