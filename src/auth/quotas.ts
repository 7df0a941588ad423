import cluster from 'node:cluster';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Redis from 'ioredis';
import type { Logger } from 'pino';
import { Errors, type AppError } from '../common/app-error';
import { ThrottledWarning } from '../common/throttled-warning';
import type { AppConfig } from '../config/app-config';
import { quotaKeyOf, type QuotaKeyOptions } from './client-key';
import { clusterRateStore } from './cluster-rate-store';
import { QuotaChannel } from './quota-channel';
import { RedisTaskSlots } from './redis-task-slots';
import { ClusterTaskSlots, LocalTaskSlots, type TaskSlots } from './task-slots';

/** The window of `QUOTA_REQUESTS_PER_SECOND`. */
const RATE_WINDOW_MS = 1_000;
/** A client at its task limit may try again once one of its tasks is likely done. */
const TASK_SLOT_RETRY_AFTER_SECONDS = 1;

export interface QuotaOptions {
  readonly quotas: AppConfig['quotas'];
  /** Set: request counts live in this Redis, shared by every replica. */
  readonly redisUrl: string | undefined;
  readonly redisPrefix: string;
  /** Who an unauthenticated caller is. */
  readonly clientKey: QuotaKeyOptions;
  readonly log: Logger;
  /** Routes never counted (probes): they must answer whatever a client does. */
  readonly isExempt: (request: FastifyRequest) => boolean;
}

/** Admits a request that runs a task, or says why not; it holds its slot until its response closes. */
export type TaskQuotaGate = (
  request: FastifyRequest,
  reply: FastifyReply,
) => AppError | undefined | Promise<AppError | undefined>;

/**
 * Per-client quotas, keyed by the authenticated client, or without
 * authentication by a trusted header or the caller's address (`quotaKeyOf`):
 *
 * - requests per second with `@fastify/rate-limit` (its `RateLimit-*` and
 *   `Retry-After` headers), counted in Redis when `REDIS_URL` is set (every
 *   replica), else in the cluster primary (every process), else here;
 * - tasks in flight, counted in Redis when `REDIS_URL` is set (every
 *   replica, with a lease per process), else in the cluster primary, else here.
 *
 * Register before the app is initialised: the plugin hooks into routes as
 * they are added.
 */
export async function registerQuotas(
  fastify: FastifyInstance,
  options: QuotaOptions,
): Promise<TaskQuotaGate> {
  const { quotas, log } = options;
  const counted = quotas.requestsPerSecond > 0 || quotas.tasksInFlight > 0;
  const channel =
    counted && cluster.isWorker
      ? new QuotaChannel((message) => process.send?.(message))
      : undefined;
  const redis =
    counted && options.redisUrl !== undefined
      ? new Redis(options.redisUrl, {
          // Fail at once while Redis is away: the request is let through, never held.
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          connectTimeout: 2_000,
          lazyConnect: false,
        })
      : undefined;
  // ioredis reports every failed reconnect; one line per 10 s says enough.
  const redisDown = new ThrottledWarning(log);
  redis?.on('error', (error: Error) =>
    redisDown.warn(`quota Redis unavailable (${error.message}); quotas are not enforced`),
  );
  const unavailable = new ThrottledWarning(log);
  const notChecked = (error: unknown) =>
    unavailable.warn(`task quota not checked: ${String((error as Error)?.message ?? error)}`);
  const slots = taskSlots(quotas.tasksInFlight, redis, options.redisPrefix, channel, notChecked);
  fastify.addHook('onClose', async () => {
    channel?.close();
    await slots?.close?.();
    redis?.disconnect();
  });

  if (quotas.requestsPerSecond > 0) {
    await fastify.register(rateLimit, {
      global: true,
      max: quotas.requestsPerSecond,
      timeWindow: RATE_WINDOW_MS,
      keyGenerator: (request) => quotaKeyOf(request, options.clientKey),
      allowList: (request) => options.isExempt(request),
      // `RateLimit-Limit`, `-Remaining`, `-Reset` (the IETF draft) rather than `X-RateLimit-*`.
      enableDraftSpec: true,
      // A store that cannot answer (Redis or the primary away) lets requests through.
      skipOnError: true,
      ...(redis !== undefined
        ? { redis, nameSpace: `${options.redisPrefix}:quota:rate:` }
        : channel !== undefined
          ? { store: clusterRateStore(channel) }
          : {}),
      errorResponseBuilder: (_request, context) =>
        Errors.rateLimited(
          'requests per second',
          context.max,
          Math.max(1, Math.ceil(context.ttl / 1000)),
        ),
    });
  }

  const max = quotas.tasksInFlight;
  if (slots === undefined) return () => undefined;
  return (request, reply) => {
    const key = quotaKeyOf(request, options.clientKey);
    const admit = (granted: boolean) => {
      if (!granted)
        return Errors.rateLimited('tasks in flight', max, TASK_SLOT_RETRY_AFTER_SECONDS);
      let held = true;
      const release = () => {
        if (!held) return;
        held = false;
        slots.release(key);
      };
      // Released as the answer is sent (`onSend`, in http/hooks.ts), before the client can
      // send its next task: on 'close' alone, a client that waits for each answer raced its
      // own release and got 429. 'close' still releases a request its client abandoned.
      request.releaseTaskSlot = release;
      reply.raw.once('close', release);
      return undefined;
    };
    const granted = slots.acquire(key);
    return granted instanceof Promise ? granted.then(admit) : admit(granted);
  };
}

/** Where tasks in flight are counted: Redis (every replica), the primary (every process), or here. */
function taskSlots(
  max: number,
  redis: Redis | undefined,
  prefix: string,
  channel: QuotaChannel | undefined,
  onUnavailable: (error: unknown) => void,
): (TaskSlots & { close?(): Promise<void> }) | undefined {
  if (max === 0) return undefined;
  if (redis !== undefined) return new RedisTaskSlots(redis, `${prefix}:quota:`, max, onUnavailable);
  if (channel !== undefined) return new ClusterTaskSlots(channel, max, onUnavailable);
  return new LocalTaskSlots(max);
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Gives back the client's tasks-in-flight slot this request holds; null when it holds none. */
    releaseTaskSlot?: (() => void) | null;
  }
}
