import { performance } from 'node:perf_hooks';

/**
 * How long a collected scrape is served again. Prometheus scrapes every 5 s or
 * more, so a second-old answer is as good as a fresh one, and a burst of
 * scrapes (an HA pair of Prometheus, a dashboard refreshing, or a flood) costs
 * one collection a second.
 */
export const SCRAPE_CACHE_MS = 1_000;

/**
 * `collect`, shared: calls that arrive while a collection runs wait for it
 * instead of starting their own, and its result answers every call for
 * `cacheMs` after it ended. A failed collection is not kept.
 */
export function sharedCollection<T>(
  collect: () => Promise<T>,
  cacheMs = SCRAPE_CACHE_MS,
  now: () => number = () => performance.now(),
): () => Promise<T> {
  let running: Promise<T> | undefined;
  let kept: { readonly value: T; readonly until: number } | undefined;
  return () => {
    if (kept !== undefined && now() < kept.until) return Promise.resolve(kept.value);
    running ??= collect()
      .then((value) => {
        kept = { value, until: now() + cacheMs };
        return value;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}
