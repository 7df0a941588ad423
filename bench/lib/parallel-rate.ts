import { Worker } from 'node:worker_threads';

/**
 * Runs the built compute task on `threads` plain worker threads at once for
 * `seconds`, with no HTTP, no pool and no event loop work: what the machine
 * itself delivers with every core busy. On a VM whose cores share a physical
 * core or a thermal budget this is below cores × the single-thread rate.
 */
export async function parallelRate(
  taskFile: string,
  input: object,
  threads: number,
  seconds: number,
): Promise<{ perSecond: number }> {
  // Plain JavaScript in each thread: the built task, run in a loop until the time is up.
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { computeTask } = require(workerData.taskFile);
    // A task context that is never cancelled (the TaskContext interface).
    const context = { signal: new AbortController().signal, throwIfCancelled() {}, progress() {} };
    for (let i = 0; i < 3; i++) computeTask.run(workerData.input, undefined, context);
    const until = performance.now() + workerData.seconds * 1000;
    let runs = 0;
    const begin = performance.now();
    while (performance.now() < until) {
      computeTask.run(workerData.input, undefined, context);
      runs += 1;
    }
    parentPort.postMessage({ runs, seconds: (performance.now() - begin) / 1000 });
  `;
  const results = await Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<{ runs: number; seconds: number }>((done, fail) => {
          const worker = new Worker(source, {
            eval: true,
            workerData: { taskFile, input, seconds },
          });
          worker.once('message', (result: { runs: number; seconds: number }) => {
            done(result);
            void worker.terminate();
          });
          worker.once('error', fail);
        }),
    ),
  );
  return { perSecond: results.reduce((sum, { runs, seconds: s }) => sum + runs / s, 0) };
}
