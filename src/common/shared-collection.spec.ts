import { sharedCollection } from './shared-collection';

describe(sharedCollection.name, () => {
  it('runs one collection for calls that arrive while it runs', async () => {
    let collections = 0;
    let finish: (value: string) => void = () => undefined;
    const collect = sharedCollection(() => {
      collections++;
      return new Promise<string>((resolve) => (finish = resolve));
    }, 0);
    const answers = Promise.all(Array.from({ length: 50 }, () => collect()));
    finish('text');
    expect(await answers).toEqual(Array.from({ length: 50 }, () => 'text'));
    expect(collections).toBe(1);
  });

  it('answers from the kept result until it is older than the cache, then collects again', async () => {
    let clock = 0;
    let collections = 0;
    const collect = sharedCollection(
      () => Promise.resolve(++collections),
      1_000,
      () => clock,
    );
    expect(await collect()).toBe(1);
    clock = 999;
    expect(await collect()).toBe(1);
    clock = 1_000;
    expect(await collect()).toBe(2);
  });

  it('keeps no failed collection: the next call tries again', async () => {
    let calls = 0;
    const collect = sharedCollection(
      () => (++calls === 1 ? Promise.reject(new Error('busy')) : Promise.resolve('text')),
      1_000,
    );
    await expect(collect()).rejects.toThrow('busy');
    expect(await collect()).toBe('text');
  });
});
