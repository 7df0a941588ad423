import { performance } from 'node:perf_hooks';

/**
 * `collect`, shared: calls that arrive while a collection runs wait for it
 * instead of starting their own, and its result answers every call for
 * `cacheMs` after it ended (METRICS_CACHE_MS, HEALTH_CACHE_MS: Prometheus
 * scrapes every 5 s or more, so a second-old answer is as good as a fresh
 * one, and a burst of operator requests costs one collection a second). A
 * failed collection is not kept.
 */
export function sharedCollection<T>(
  collect: () => Promise<T>,
  cacheMs: number,
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
