import { poolSettings } from './pool-options';

const settings = (options: Parameters<typeof poolSettings>[0] = { tasks: [] }) =>
  poolSettings(options);
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultThreadFile, piscinaOptions, threadEnv } from './piscina-options';

const balancer = () => null;

describe(piscinaOptions.name, () => {
  it('keeps a fixed number of threads (one more while one is replaced), one task each, never idling them out', () => {
    const options = piscinaOptions(settings({ tasks: [], threads: 3 }).pool, balancer);
    expect(options).toMatchObject({
      minThreads: 3,
      maxThreads: 4,
      concurrentTasksPerWorker: 1,
      idleTimeout: Infinity,
      loadBalancer: balancer,
    });
  });

  it("bounds each thread's heap by the configured cap", () => {
    const limited = settings({ tasks: [], maxOldGenerationMb: 64 }).pool;
    expect(piscinaOptions(limited, balancer).resourceLimits).toEqual({
      maxOldGenerationSizeMb: 64,
    });
  });

  it("keeps Piscina's own queue as a backstop of at least one", () => {
    const pool = { ...settings().pool, maxQueue: 0 };
    expect(piscinaOptions(pool, balancer).maxQueue).toBe(1);
  });

  it('starts TypeScript threads through tsx and built ones on plain JavaScript', () => {
    const pool = settings().pool;
    const fromSource = piscinaOptions(
      pool,
      balancer,
      defaultThreadFile('/app/src/workers/pool.ts'),
    );
    expect(fromSource.filename).toMatch(/thread-entry\.ts$/);
    expect(fromSource.execArgv).toEqual(['--require', expect.stringContaining('tsx')]);
    const built = piscinaOptions(pool, balancer, defaultThreadFile('/app/dist/workers/pool.js'));
    expect(built.filename).toMatch(/thread-entry\.js$/);
    expect(built.execArgv).toBeUndefined();
    const hosts = piscinaOptions(pool, balancer, '/app/dist/workers/thread-bundle.js');
    expect(hosts.filename).toBe('/app/dist/workers/thread-bundle.js');
  });

  it('hands the threads their task modules, nice increment and spawn time', () => {
    const pool = { ...settings().pool, taskModules: ['/x/tasks.js'], niceIncrement: 5 };
    const before = performance.timeOrigin + performance.now();
    // A copy, as Node makes one for each thread it constructs (structured clone reads getters).
    const copy = structuredClone(piscinaOptions(pool, balancer).workerData) as {
      spawnedAt: number;
    };
    expect(copy).toEqual({
      taskModules: ['/x/tasks.js'],
      niceIncrement: 5,
      spawnedAt: expect.any(Number) as number,
      flushCompileCache: true,
    });
    expect(copy.spawnedAt).toBeGreaterThanOrEqual(before);
  });

  it("asks only the pool's first thread to write Node's compile cache", () => {
    const { workerData } = piscinaOptions(settings().pool, balancer);
    const flushes = [1, 2, 3].map(
      () => (structuredClone(workerData) as { flushCompileCache: boolean }).flushCompileCache,
    );
    expect(flushes).toEqual([true, false, false]);
  });

  it("gives the threads Node's compile cache unless the process chose its own or none", () => {
    expect(threadEnv({ PATH: '/bin' })).toEqual({
      PATH: '/bin',
      NODE_COMPILE_CACHE: join(tmpdir(), 'node-compile-cache'),
    });
    // Node's default then: the threads inherit the process's environment, choice included.
    expect(threadEnv({ NODE_COMPILE_CACHE: '/var/cache/corepool' })).toBeUndefined();
    expect(threadEnv({ NODE_DISABLE_COMPILE_CACHE: '1' })).toBeUndefined();
  });
});
