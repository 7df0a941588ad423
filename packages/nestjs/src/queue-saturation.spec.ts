import { QueueSaturation } from './queue-saturation';

describe(QueueSaturation.name, () => {
  it('saturates at the high-water share of the queue limit', () => {
    const saturation = new QueueSaturation(0.8);
    expect(saturation.update(7, 10)).toBe(false);
    expect(saturation.update(8, 10)).toBe(true);
  });

  it('stays saturated until the queue is down to half the mark', () => {
    const saturation = new QueueSaturation(0.8);
    saturation.update(8, 10);
    expect([7, 6, 5].map((size) => saturation.update(size, 10))).toEqual([true, true, true]);
    expect(saturation.update(4, 10)).toBe(false);
  });

  it('recovers at the low mark and saturates again only at the high one', () => {
    const saturation = new QueueSaturation(0.5);
    expect(saturation.update(5, 10)).toBe(true);
    expect(saturation.update(3, 10)).toBe(true);
    expect(saturation.update(2, 10)).toBe(false);
    expect(saturation.update(4, 10)).toBe(false);
    expect(saturation.update(5, 10)).toBe(true);
  });

  it('needs at least one queued task, even for a tiny queue limit', () => {
    const saturation = new QueueSaturation(0.8);
    expect(saturation.update(0, 0)).toBe(false);
    expect(saturation.update(1, 1)).toBe(true);
    expect(saturation.update(0, 1)).toBe(false);
  });
});
