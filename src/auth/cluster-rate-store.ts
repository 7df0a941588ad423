import type { QuotaChannel } from './quota-channel';

type Callback = (error: Error | null, result?: { current: number; ttl: number }) => void;

/**
 * A store for `@fastify/rate-limit` that counts in the cluster primary, so a
 * client's requests per second are one count across every process. The
 * plugin constructs its store itself (`new Store(options)`), hence a class
 * made around the channel.
 */
export function clusterRateStore(channel: QuotaChannel) {
  return class ClusterRateStore {
    incr(key: string, callback: Callback, timeWindow: number): void {
      channel.hit(key, timeWindow).then(
        ({ current, ttl }) => callback(null, { current, ttl }),
        (error: Error) => callback(error),
      );
    }

    /** One store for every route: the quota is per client, not per route. */
    child(): this {
      return this;
    }
  };
}
