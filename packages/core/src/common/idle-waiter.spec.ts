import { IdleWaiter } from './idle-waiter';

describe(IdleWaiter.name, () => {
  it('resolves true at once when already idle', async () => {
    await expect(new IdleWaiter().wait(true, 0)).resolves.toBe(true);
  });

  it('resolves true for every waiter when the count reaches zero', async () => {
    const waiter = new IdleWaiter();
    const waiting = [waiter.wait(false, 10_000), waiter.wait(false, 10_000)];
    waiter.idle();
    await expect(Promise.all(waiting)).resolves.toEqual([true, true]);
  });

  it('resolves false when the time runs out first', async () => {
    await expect(new IdleWaiter().wait(false, 5)).resolves.toBe(false);
  });
});
