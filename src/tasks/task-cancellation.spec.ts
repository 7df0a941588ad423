import { compressTask } from './compress.task';
import { computeTask } from './compute.task';
import { factorialTask } from './factorial.task';
import { jsonStatsTask } from './json-stats.task';
import { matrixMultiplyTask } from './matrix-multiply.task';
import { TaskCancelledError } from '@corepool/core/task';
import { cancelledContext, contextCancelledByAnotherThread } from '../../test/support/task-context';

/**
 * The long-running built-in tasks check their cancellation: cancelled before
 * they start, they do no work; cancelled while they run (the flag set by
 * another thread, as the main thread sets it), they stop instead of running
 * to the end.
 */
describe('built-in tasks stop when cancelled', () => {
  const records = Buffer.from(JSON.stringify(Array.from({ length: 10 }, (_, i) => ({ i }))));

  it.each([
    [
      'compute',
      () => computeTask.run({ iterations: 1_000, payloadSize: 0 }, undefined, cancelledContext()),
    ],
    ['factorial', () => factorialTask.run({ n: 1_000 }, undefined, cancelledContext())],
    [
      'matrix-multiply',
      () => matrixMultiplyTask.run({ size: 10, seed: 1 }, undefined, cancelledContext()),
    ],
    ['json-stats', () => jsonStatsTask.run({}, records, cancelledContext())],
    ['compress', () => compressTask.run({ format: 'gzip', level: 1 }, records, cancelledContext())],
  ])('%s: cancelled before it starts', async (_name, run) => {
    await expect(Promise.resolve().then((): unknown => run())).rejects.toBeInstanceOf(
      TaskCancelledError,
    );
  });

  // Each of these runs for seconds when nobody cancels it.
  it.each([
    [
      'compute',
      () =>
        computeTask.run(
          { iterations: 50_000_000, payloadSize: 0 },
          undefined,
          contextCancelledByAnotherThread(100),
        ),
    ],
    [
      'factorial',
      () => factorialTask.run({ n: 1_000_000 }, undefined, contextCancelledByAnotherThread(100)),
    ],
    [
      'matrix-multiply',
      () =>
        matrixMultiplyTask.run(
          { size: 1_000, seed: 1 },
          undefined,
          contextCancelledByAnotherThread(100),
        ),
    ],
  ])('%s: cancelled while it runs', async (_name, run) => {
    await expect(Promise.resolve().then((): unknown => run())).rejects.toBeInstanceOf(
      TaskCancelledError,
    );
  });
});
