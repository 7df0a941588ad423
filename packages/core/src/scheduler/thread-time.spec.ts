import { threadTimeUntil } from './thread-time';

describe(threadTimeUntil.name, () => {
  it('is the first thread to free up when nothing is ahead', () => {
    expect(threadTimeUntil([300, 20], 0)).toBe(20);
    expect(threadTimeUntil([0, 0], 0)).toBe(0);
  });

  it('spreads the work ahead over the threads as they free up', () => {
    // 100 ms of work: the thread free at 20 ms takes it alone until 120 ms.
    expect(threadTimeUntil([300, 20], 100)).toBe(120);
    // 400 ms: both threads are needed; (400 + 300 + 20) / 2.
    expect(threadTimeUntil([300, 20], 400)).toBe(360);
    expect(threadTimeUntil([0, 0, 0, 0], 400)).toBe(100);
  });
});
