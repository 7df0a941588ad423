import { RefusalSample } from './refusal-sample';

describe(RefusalSample.name, () => {
  it('lets one refusal a second be logged and counts the ones it leaves out', () => {
    const clock = { now: 0 };
    const sample = new RefusalSample(1000, () => clock.now);
    expect(sample.take()).toBe(0);
    for (let i = 0; i < 500; i++) {
      clock.now += 1;
      expect(sample.take()).toBeUndefined();
    }
    clock.now = 1000;
    expect(sample.take()).toBe(500);
    clock.now = 1500;
    expect(sample.take()).toBeUndefined();
  });
});
