/**
 * Who is calling. One seam that the rest of the service reads: the scheduler
 * uses `id` as the fair-share key, jobs use it as their owner, access logs
 * print it. Authentication (when configured) sets `request.identity`; without
 * it every caller is the one anonymous client.
 */
export interface ClientIdentity {
  /** Stable, label-safe id of the caller (a key's name, a token's subject claim). */
  readonly id: string;
  /** Scopes granted to the caller, e.g. `tasks:run`, `jobs:read`, `admin`. */
  readonly scopes: ReadonlySet<string>;
  /** False for the anonymous client of `AUTH_MODE=none`. */
  readonly authenticated: boolean;
}

export const ANONYMOUS: ClientIdentity = Object.freeze({
  id: 'anonymous',
  scopes: new Set<string>(),
  authenticated: false,
});

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Set by authentication before any handler runs; null (Fastify's
     * decoration, so every request keeps one shape) or absent means anonymous.
     */
    identity?: ClientIdentity | null;
  }
}

/** The request's caller: the authenticated client, or the anonymous one. */
export function identityOf(request: { identity?: ClientIdentity | null }): ClientIdentity {
  return request.identity ?? ANONYMOUS;
}
