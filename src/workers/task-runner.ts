import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { threadId } from 'node:worker_threads';
import { TaskCancelledError } from '../tasks/task-context';
import { TaskInputError } from '../tasks/task-input-error';
import { createCancelFlag, FlagTaskContext } from './cancel-flag';
import { portReporter } from './task-progress';
import type { TaskRequest, TaskResponse } from './task-message';
import type { TaskRegistry } from '../tasks/task-registry';

/** Epoch milliseconds with sub-millisecond precision, comparable across threads. */
export const preciseNow = (): number => performance.timeOrigin + performance.now();

/** A no-op request that makes a fresh thread load its task code before real work arrives. */
export const WARM_UP_TASK = '';

/**
 * Runs one task request against a registry and never throws: whatever the
 * task does, the caller gets a TaskResponse. Used by the thread entry and,
 * with `POOL_THREADS=0`, directly on the event loop.
 */
export function createTaskRunner(registry: TaskRegistry) {
  return async function runTask(request: TaskRequest): Promise<TaskResponse> {
    const startedAt = preciseNow();
    // The heap after the task, for recycling on memory: one cheap V8 call, no GC.
    const timing = () => ({
      startedAt,
      runMs: preciseNow() - startedAt,
      threadId,
      heapUsedBytes: getHeapStatistics().used_heap_size,
    });
    if (request.task === WARM_UP_TASK) return { ok: true, value: null, ...timing() };
    const task = registry.get(request.task);
    if (task === undefined) {
      return { ok: false, kind: 'task', message: `Unknown task '${request.task}'`, ...timing() };
    }
    const progress = request.progress === undefined ? undefined : portReporter(request.progress);
    const context = new FlagTaskContext(
      request.cancelFlag ?? createCancelFlag(),
      threadId,
      progress?.report,
    );
    try {
      // Cancelled while it was on its way: not worth starting.
      context.throwIfCancelled();
      const value: unknown = await task.run(request.input, request.body, context);
      return { ok: true, value, ...timing() };
    } catch (error) {
      // Whatever a cancelled task throws (its own AbortError included) is the cancellation.
      if (error instanceof TaskCancelledError || context.cancelled) {
        return { ok: false, kind: 'cancelled', message: 'the task was cancelled', ...timing() };
      }
      if (TaskInputError.is(error)) {
        return {
          ok: false,
          kind: 'input',
          message: error.message,
          property: error.property,
          code: error.code,
          ...timing(),
        };
      }
      const message = error instanceof Error ? error.message : String(error);
      return { ok: false, kind: 'task', message, ...timing() };
    } finally {
      context.finish();
      // Before the answer leaves: no report is posted after the result.
      progress?.end();
    }
  };
}
