import { ShareWatch } from './share-watch';

const options = { maxShareRatio: 1.4, minAnswers: 20 };

describe(ShareWatch.name, () => {
  it('names the busiest process and the share above the mean it should move', () => {
    const watch = new ShareWatch(options);
    watch.record(1, 90);
    watch.record(2, 10);
    expect(watch.decide([1, 2])).toEqual({ id: 1, fraction: (90 - 50) / 90 });
  });

  it('leaves shares alone while the busiest is within its ratio of the mean', () => {
    const watch = new ShareWatch(options);
    watch.record(1, 69);
    watch.record(2, 31);
    expect(watch.decide([1, 2])).toBeUndefined();
  });

  it('counts a process that answered nothing, such as a new one', () => {
    const watch = new ShareWatch(options);
    for (const [id, answered] of [
      [1, 40],
      [2, 40],
      [3, 0],
    ] as const)
      watch.record(id, answered);
    expect(watch.decide([1, 2, 3])?.fraction).toBeCloseTo((40 - 80 / 3) / 40);
  });

  it('waits until every serving process has reported, and uses each report once', () => {
    const watch = new ShareWatch(options);
    watch.record(1, 90);
    expect(watch.decide([1, 2])).toBeUndefined();
    watch.record(2, 10);
    expect(watch.decide([1, 2])).toBeDefined();
    expect(watch.decide([1, 2])).toBeUndefined();
  });

  it('does nothing with too few answers to tell, or a single process', () => {
    const watch = new ShareWatch(options);
    watch.record(1, 15);
    watch.record(2, 0);
    expect(watch.decide([1, 2])).toBeUndefined();
    watch.record(1, 100);
    expect(watch.decide([1])).toBeUndefined();
  });

  it('forgets a process that left', () => {
    const watch = new ShareWatch(options);
    watch.record(1, 90);
    watch.record(2, 10);
    watch.forget(2);
    expect(watch.decide([1, 3])).toBeUndefined();
  });
});
