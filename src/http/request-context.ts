import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { kRouteContext } from 'fastify/lib/symbols';
import { profileIn, type RouteProfile } from './route-behaviour';

declare module 'fastify' {
  interface FastifyRequest {
    /** `performance.now()` when the request arrived; task deadlines count from here. */
    arrivedAt: number;
    /** Set by `routeProfileOf` on first use; null until then. */
    routeProfile: RouteProfile | null;
  }
}

/** What Fastify keeps per route; its `config` holds the route's profile (route-behaviour.ts). */
interface RouteContext {
  readonly config?: Record<string, unknown> & { readonly url?: string };
}

/**
 * The profile of the route that matched: its template and declared behaviour.
 * Read once per request from Fastify's route context, by the symbol Nest's own
 * Fastify adapter uses: `request.routeOptions` builds a dozen-field object on
 * every read (ADR 0037 has its cost). A spec
 * holds the two to the same answer, so a Fastify upgrade that moves the
 * context fails there, not in production.
 */
export function routeProfileOf(request: FastifyRequest): RouteProfile {
  // Truthy, not `!== null`: on a request Fastify refuses before routing (a bad URL) the
  // decorations are missing, and the profile reads undefined.
  if (request.routeProfile) return request.routeProfile;
  const config = (request as unknown as Record<symbol, RouteContext | undefined>)[kRouteContext]
    ?.config;
  request.routeProfile = profileIn(config, config?.url);
  return request.routeProfile;
}

/** The template of the route that matched (`/api/tasks/:name`), or `unmatched`. */
export function routeOf(request: FastifyRequest): string {
  return routeProfileOf(request).template;
}

/** An incoming id is honoured only if it is short and plain, so it is safe in logs and headers. */
const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * Fastify's `genReqId`: honours a safe `x-request-id`, else makes a UUID.
 * Fastify binds it to the request's logger as `reqId`.
 */
export function requestId(raw: IncomingMessage): string {
  const incoming = raw.headers['x-request-id'];
  return typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming)
    ? incoming
    : nextRequestId();
}

/** Ids from one random prefix at most; then a fresh one. */
const IDS_PER_PREFIX = 2 ** 24;
let idPrefix = '';
let idCount = IDS_PER_PREFIX;

/**
 * A UUID in version-4 form: its first 104 bits (98 of them random) drawn once
 * per 2^24 requests, a counter in its last 24. Unique across processes and
 * restarts as random UUIDs are, for a fraction of the cost: `randomUUID`
 * builds each id from 20 string concatenations, a share of a light request's
 * instructions worth saving (ADR 0032). Ids only correlate logs and responses; nothing
 * relies on them being unguessable.
 */
export function nextRequestId(): string {
  if (idCount === IDS_PER_PREFIX) {
    // `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxx`: the version and variant bits stay randomUUID's.
    idPrefix = randomUUID().slice(0, 30);
    idCount = 0;
  }
  // 2^24 + n in hex is a 1 and then n in 6 digits, without `padStart`'s cost. It stays a
  // small integer: a counter past 2^31 would be a double, which V8 turns into hex one digit
  // at a time with `fmod`, costlier still (ADR 0032 has both counts).
  return idPrefix + (IDS_PER_PREFIX + idCount++).toString(16).slice(1);
}

/**
 * `onRequest`: stamps arrival time and echoes the request id on every
 * response. Every request runs this hook, so it is synchronous: an async hook
 * costs a promise and a trip through the microtask queue per request.
 */
export function stampRequest(request: FastifyRequest, reply: FastifyReply): void {
  request.arrivedAt = performance.now();
  void reply.header('x-request-id', request.id);
}
