import type { TaskContext } from '../../src/tasks/task-context';
import { createCancelFlag, FlagTaskContext, requestCancel } from '../../src/workers/cancel-flag';

/** The context a task gets in a thread, here for a task nobody cancels. */
export function liveContext(): TaskContext {
  return new FlagTaskContext(createCancelFlag(), 0);
}

/** A context already cancelled, as a task sees it after its client left. */
export function cancelledContext(): TaskContext {
  const flag = createCancelFlag();
  requestCancel(flag);
  return new FlagTaskContext(flag, 0);
}

/** A context cancelled `afterMs` from now, from a timer, as the main thread would. */
export function contextCancelledAfter(afterMs: number): TaskContext {
  const flag = createCancelFlag();
  setTimeout(() => requestCancel(flag), afterMs).unref();
  return new FlagTaskContext(flag, 0);
}
