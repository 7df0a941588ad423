/**
 * When `workMs` of queued work has been taken up by threads that free up at
 * `freeAtMs` (ms from now, one entry per thread; 0 for a free thread): the
 * smallest `t` with `sum(max(0, t - freeAt)) >= workMs`. Work is treated as
 * fluid, spread over the threads as they free up, so with nothing ahead a
 * task waits for the first thread to free, not for the average one.
 */
export function threadTimeUntil(freeAtMs: readonly number[], workMs: number): number {
  const free = [...freeAtMs].sort((a, b) => a - b);
  if (free.length === 0) return Infinity;
  let level = free[0] as number;
  let filled = 0;
  for (let threads = 1; threads <= free.length; threads++) {
    const next = free[threads] ?? Infinity;
    const room = (next - level) * threads;
    if (filled + room >= workMs) return level + (workMs - filled) / threads;
    filled += room;
    level = next;
  }
  return level;
}
