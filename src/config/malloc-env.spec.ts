import { MALLOC_DEFAULTS, mallocEnv } from './malloc-env';

describe(mallocEnv.name, () => {
  it('adds every default to an environment that sets none', () => {
    expect(mallocEnv({ PATH: '/usr/bin' })).toEqual(MALLOC_DEFAULTS);
  });

  it("leaves an operator's own settings alone", () => {
    const added = mallocEnv({ MALLOC_ARENA_MAX: '8', MALLOC_TRIM_THRESHOLD_: '' });
    expect(added).not.toHaveProperty('MALLOC_ARENA_MAX');
    expect(added).toMatchObject({
      MALLOC_TRIM_THRESHOLD_: MALLOC_DEFAULTS.MALLOC_TRIM_THRESHOLD_,
      MALLOC_MMAP_THRESHOLD_: MALLOC_DEFAULTS.MALLOC_MMAP_THRESHOLD_,
    });
  });

  it('adds nothing when GLIBC_TUNABLES sets malloc tunables', () => {
    expect(mallocEnv({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=4' })).toEqual({});
    expect(mallocEnv({ GLIBC_TUNABLES: 'glibc.rtld.nns=2' })).toEqual(MALLOC_DEFAULTS);
  });
});
