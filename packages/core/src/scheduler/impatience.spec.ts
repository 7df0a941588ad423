import { Impatience } from './impatience';

describe(Impatience.name, () => {
  it('sees nothing while every task that leaves the queue was started', () => {
    const impatience = new Impatience(1000);
    for (let t = 0; t < 5000; t += 10) impatience.left(t, false);
    expect(impatience.seen(5000)).toBe(false);
  });

  it('sees clients giving up once they are more than a stray few of the tasks leaving', () => {
    const impatience = new Impatience(1000, 0.02);
    for (let t = 0; t < 98; t++) impatience.left(t, false);
    impatience.left(98, true);
    expect(impatience.seen(98)).toBe(false); // 1 of 99: a client navigating away
    impatience.left(99, true);
    expect(impatience.seen(99)).toBe(true); // 2 of 100
  });

  it('keeps the evidence through the next window, and forgets it after two', () => {
    const impatience = new Impatience(1000);
    impatience.left(0, true);
    expect(impatience.seen(999)).toBe(true);
    expect(impatience.seen(1500)).toBe(true);
    impatience.left(1500, false);
    expect(impatience.seen(2600)).toBe(false);
  });

  it('forgets at once after a quiet stretch longer than two windows', () => {
    const impatience = new Impatience(1000);
    impatience.left(0, true);
    expect(impatience.seen(5000)).toBe(false);
  });
});
