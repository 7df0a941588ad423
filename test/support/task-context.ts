import { Worker } from 'node:worker_threads';
import type { TaskContext } from '@corepool/core';
import { createCancelFlag, FlagTaskContext, requestCancel } from '@corepool/core/host';

/** The context a task gets in a thread, here for a task nobody cancels. */
export function liveContext(): TaskContext {
  return new FlagTaskContext(createCancelFlag(), 0);
}

/** A context nobody cancels whose progress reports go to `report`. */
export function reportingContext(report: TaskContext['progress']): TaskContext {
  return new FlagTaskContext(createCancelFlag(), 0, report);
}

/** A context already cancelled, as a task sees it after its client left. */
export function cancelledContext(): TaskContext {
  const flag = createCancelFlag();
  requestCancel(flag);
  return new FlagTaskContext(flag, 0);
}

/**
 * A context cancelled `afterMs` from now by another thread, as the main
 * thread cancels a task that runs on a worker thread: a timer on this thread
 * could not fire while a synchronous task holds it.
 */
export function contextCancelledByAnotherThread(afterMs: number): TaskContext {
  const flag = createCancelFlag();
  const canceller = new Worker(
    `const { workerData } = require('node:worker_threads');
     Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.afterMs);
     Atomics.store(workerData.flag, 0, 1); // slot CANCELLED of cancel-flag.ts`,
    { eval: true, workerData: { flag, afterMs } },
  );
  canceller.unref();
  return new FlagTaskContext(flag, 0);
}
