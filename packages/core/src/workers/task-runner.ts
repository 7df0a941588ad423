import { performance } from 'node:perf_hooks';
import type * as V8 from 'node:v8';
import { parentPort, threadId } from 'node:worker_threads';
import { TaskCancelledError } from '../tasks/task-context';
import { TaskInputError } from '../tasks/task-input-error';
import { createCancelFlag, FlagTaskContext } from './cancel-flag';
import { progressReporter, type ProgressMessage } from './task-progress';
import type { TaskRequest, TaskResponse, TaskTiming } from './task-message';
import type { TaskRegistry } from '../tasks/task-registry';
import { ATTRIBUTE_PREFIX, ThreadTrace } from './thread-trace';

/** Epoch milliseconds with sub-millisecond precision, comparable across threads. */
export const preciseNow = (): number => performance.timeOrigin + performance.now();

/** A no-op request that makes a fresh thread load its task code before real work arrives. */
export const WARM_UP_TASK = '';

let v8: typeof V8 | undefined;
/**
 * The heap in use, for recycling on memory: one cheap V8 call, no GC. `node:v8` is loaded by the
 * first task that reads it, not by the warm-up, which it slowed for every thread (ADR 0021).
 */
function heapUsedBytes(): number {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  v8 ??= require('node:v8') as typeof V8;
  return v8.getHeapStatistics().used_heap_size;
}

/**
 * Runs one task request against a registry and never throws: whatever the
 * task does, the caller gets a TaskResponse. Used by the thread entry and,
 * with `POOL_THREADS=0`, directly on the event loop. Progress reports leave
 * through `postProgress`: on a thread, its `parentPort`.
 */
export function createTaskRunner(
  registry: TaskRegistry,
  postProgress: (message: ProgressMessage) => void = (message) => parentPort?.postMessage(message),
) {
  /** `batchSize`: the tasks of the batch this one came in, when it was batched (`thread-batch.ts`). */
  return async function runTask(request: TaskRequest, batchSize?: number): Promise<TaskResponse> {
    const startedAt = preciseNow();
    const trace = request.trace === undefined ? undefined : startRunSpan(request, startedAt);
    const response = await runTraced(request, startedAt, trace);
    if (trace === undefined) return response;
    return { ...response, spans: endRunSpan(trace, response, batchSize) };
  };

  async function runTraced(
    request: TaskRequest,
    startedAt: number,
    trace: ThreadTrace | undefined,
  ): Promise<TaskResponse> {
    const progress =
      request.progress === undefined ? undefined : progressReporter(request.progress, postProgress);
    // The heap after the task, for recycling on memory; a fresh thread's heap after the
    // warm-up is no reason to recycle it (and the pool does not look).
    const timing = (readHeap = true): TaskTiming => {
      const measured = {
        startedAt,
        runMs: preciseNow() - startedAt,
        threadId,
        heapUsedBytes: readHeap ? heapUsedBytes() : 0,
      };
      // Flushed before the answer is built, which says how many reports to wait for.
      return progress === undefined ? measured : { ...measured, progressReports: progress.end() };
    };
    if (request.task === WARM_UP_TASK) return { ok: true, value: null, ...timing(false) };
    const task = registry.get(request.task);
    if (task === undefined) {
      return { ok: false, kind: 'task', message: `Unknown task '${request.task}'`, ...timing() };
    }
    const context = new FlagTaskContext(
      request.cancelFlag ?? createCancelFlag(),
      threadId,
      progress?.report,
      trace,
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
    }
  }
}

/** The run span, begun as the thread takes the task: a child of the request's scheduler span. */
function startRunSpan(request: TaskRequest, startedAt: number): ThreadTrace | undefined {
  const parent = request.trace;
  if (parent === undefined) return undefined;
  return new ThreadTrace(
    parent,
    `run ${request.task}`,
    startedAt,
    {
      [`${ATTRIBUTE_PREFIX}task.name`]: request.task,
      [`${ATTRIBUTE_PREFIX}task.input_size`]: parent.inputSize,
      // OpenTelemetry's attribute for the thread that did the work: never the main thread's 0.
      'thread.id': threadId,
    },
    preciseNow,
  );
}

/** Ends the run span with the task's outcome; a failed task's span has an error status. */
function endRunSpan(trace: ThreadTrace, response: TaskResponse, batchSize?: number) {
  const outcome = response.ok ? 'success' : response.kind;
  const attributes = {
    [`${ATTRIBUTE_PREFIX}task.outcome`]: outcome,
    ...(batchSize === undefined ? {} : { [`${ATTRIBUTE_PREFIX}task.batch_size`]: batchSize }),
  };
  if (response.ok) return trace.finish(attributes);
  // The stable code the main thread answers with is set there, once it is known (`task-tracing.ts`).
  const type = response.kind === 'input' ? (response.code ?? 'VALIDATION_FAILED') : outcome;
  return trace.finish(attributes, { type, message: response.message });
}
