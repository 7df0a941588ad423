/** Steps within each power of ten: 1, 2.5, 5. */
const STEPS = [1, 2.5, 5];
/** The smallest bucket, 10 µs: a trivial task on a warm thread. */
const SMALLEST_SECONDS = 1e-5;

/**
 * Histogram buckets (seconds) for task wait and run times: from 10 µs, in
 * 1-2.5-5 steps, up to the task timeout, which is the last bucket — nothing
 * waits or runs longer, since the deadline stops it.
 */
export function taskBuckets(taskTimeoutMs: number): number[] {
  const limit = taskTimeoutMs / 1000;
  const buckets: number[] = [];
  for (let decade = SMALLEST_SECONDS; decade < limit; decade *= 10) {
    for (const step of STEPS) {
      const bucket = Number((decade * step).toPrecision(3));
      if (bucket < limit) buckets.push(bucket);
    }
  }
  buckets.push(limit);
  return buckets;
}
