import { taskBuckets } from './task-buckets';

describe(taskBuckets.name, () => {
  it('spans 10 µs to the default 30 s timeout in 1-2.5-5 steps', () => {
    const buckets = taskBuckets(30_000);
    expect(buckets.slice(0, 4)).toEqual([0.00001, 0.000025, 0.00005, 0.0001]);
    expect(buckets.slice(-4)).toEqual([5, 10, 25, 30]);
    expect(buckets).toContain(0.001);
    expect(buckets).toContain(0.25);
  });

  it('rises strictly and ends at the timeout, whatever it is', () => {
    for (const timeoutMs of [1, 50, 1500, 30_000, 86_400_000]) {
      const buckets = taskBuckets(timeoutMs);
      expect(buckets.at(-1)).toBe(timeoutMs / 1000);
      for (let i = 1; i < buckets.length; i++) {
        expect(buckets[i]).toBeGreaterThan(buckets[i - 1]!);
      }
    }
  });
});
