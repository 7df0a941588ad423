import { CoDel } from './codel';

describe(CoDel.name, () => {
  const options = { targetMs: 100, intervalMs: 500 };

  it('is not overloaded by a delay above the target for less than an interval', () => {
    const codel = new CoDel(options);
    codel.dequeued(300, 0);
    codel.dequeued(300, 499);
    expect(codel.overloaded).toBe(false);
  });

  it('is overloaded once the delay stayed above the target for a whole interval', () => {
    const codel = new CoDel(options);
    codel.dequeued(300, 0);
    codel.dequeued(300, 500);
    expect(codel.overloaded).toBe(true);
  });

  it('starts the interval over when one task waited less than the target', () => {
    const codel = new CoDel(options);
    codel.dequeued(300, 0);
    codel.dequeued(50, 400);
    codel.dequeued(300, 600);
    expect(codel.overloaded).toBe(false);
  });

  it('stays overloaded while short delays come from newest-first service, until the queue empties', () => {
    const codel = new CoDel(options);
    codel.dequeued(300, 0);
    codel.dequeued(300, 500);
    codel.dequeued(1, 600);
    expect(codel.overloaded).toBe(true);
    codel.drained();
    expect(codel.overloaded).toBe(false);
  });
});
