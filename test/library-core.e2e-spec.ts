import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const FIXTURES = join(__dirname, '..', 'packages', 'core', 'test', 'fixtures');

jest.setTimeout(60_000);

/** Runs a fixture app in a plain Node process, the engine loaded as built (`npm run build`). */
async function app(file: string): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, [join(FIXTURES, file)], { cwd: FIXTURES });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
}

describe('@corepool/core in a plain Node app (real process, real threads, the built package)', () => {
  let esm: Record<string, unknown>;
  beforeAll(async () => {
    esm = await app('plain-node-app.mjs');
  });

  it('loads task modules given as a path, a file: URL or its href: a tasks array, named exports, a default export', () => {
    expect(esm.tasks).toEqual(['double', 'fib', 'shout', 'spin']);
    expect(esm).toMatchObject({
      fib: { value: 6765 },
      double: { value: 42 },
      shout: { value: 'HI' },
    });
  });

  it('fails each way with its code: bad input, an unknown task, the deadline, the caller leaving', () => {
    expect(esm).toMatchObject({
      invalid: { code: 'VALIDATION_FAILED' },
      unknown: { code: 'TASK_NOT_FOUND' },
      timeout: { code: 'TASK_TIMEOUT' },
      cancelled: { code: 'TASK_CANCELLED' },
    });
  });

  it('refuses before running what cannot finish in time, with a retry time, and keeps its thread', () => {
    expect(esm.refused).toEqual({
      code: 'POOL_SATURATED',
      reason: 'too-long',
      retryAfterSeconds: expect.any(Number),
    });
    expect(esm.stats).toEqual({
      threads: 1,
      threadRestarts: 0,
      stoppedCooperatively: 2,
      refusedTooLong: 1,
      ready: true,
    });
  });

  it('drains on close: what was accepted finishes, what comes after is refused', () => {
    expect(esm).toMatchObject({
      drained: { value: 200 },
      afterClose: { code: 'SHUTTING_DOWN' },
      closedCleanly: true,
    });
  });

  it('works from CommonJS, names the bad option or module, and starts no thread once closed', async () => {
    expect(await app('plain-node-app.cjs')).toEqual({
      badThreads: 'RangeError: createPool: `threads` must be a number ≥ 0, got -1',
      noTasks: 'TypeError: createPool: `tasks` must be an array of module paths or file: URLs',
      notATask: expect.stringMatching(/^Error: .*not-a-task\.cjs exports no task definitions$/),
      closedUnused: { code: 'SHUTTING_DOWN', threads: 0 },
      fib: 55,
    });
  });
});
