// Fastify ships no types for its internal symbols; Nest's Fastify adapter reads this one too.
declare module 'fastify/lib/symbols' {
  /** The per-route context a request carries (`config`, handler, hooks). */
  export const kRouteContext: unique symbol;
}
