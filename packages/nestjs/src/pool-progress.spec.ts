import { PoolProgress } from './pool-progress';

describe(PoolProgress.name, () => {
  it('counts a stall from the first sample that saw tasks waiting and none finished', () => {
    let clock = 0;
    const progress = new PoolProgress(() => clock);
    expect(progress.stalledMs(3, 10)).toBe(0);
    clock = 400;
    expect(progress.stalledMs(3, 10)).toBe(400);
    clock = 1_000;
    expect(progress.stalledMs(5, 10)).toBe(1_000);
  });

  it('starts again whenever a task finished', () => {
    let clock = 0;
    const progress = new PoolProgress(() => clock);
    progress.stalledMs(3, 10);
    clock = 900;
    expect(progress.stalledMs(3, 11)).toBe(0);
    clock = 1_000;
    expect(progress.stalledMs(3, 11)).toBe(100);
  });

  it('is never stalled while no task waits, however long nothing finishes', () => {
    let clock = 0;
    const progress = new PoolProgress(() => clock);
    expect(progress.stalledMs(0, 10)).toBe(0);
    clock = 60_000;
    expect(progress.stalledMs(0, 10)).toBe(0);
    // Tasks waiting from now: the idle minute before does not count.
    expect(progress.stalledMs(2, 10)).toBe(0);
    clock = 60_500;
    expect(progress.stalledMs(2, 10)).toBe(500);
  });
});
