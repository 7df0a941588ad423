import type { RedisOptions } from 'bullmq';

/**
 * `redis://user:pass@host:port/db` or `rediss://…` (TLS) as connection options,
 * in BullMQ's type (which ioredis takes as they are).
 */
export function redisOptions(url: string): RedisOptions {
  const parsed = new URL(url);
  const db = parsed.pathname.replace(/^\//, '');
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    ...(parsed.username === '' ? {} : { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password === '' ? {} : { password: decodeURIComponent(parsed.password) }),
    ...(db === '' ? {} : { db: Number(db) }),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    // Reconnect forever, at most every 2 s: the service recovers by itself when Redis returns.
    retryStrategy: (times: number) => Math.min(times * 200, 2000),
  };
}

/**
 * The producer's connection (API requests): commands fail at once while Redis
 * is unreachable instead of queueing in ioredis until it returns, so a
 * submission is answered with QUEUE_UNAVAILABLE, never left hanging.
 */
export function producerOptions(url: string): RedisOptions {
  return {
    ...redisOptions(url),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
  };
}
