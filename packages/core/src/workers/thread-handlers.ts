/**
 * What a worker thread runs (Piscina's `filename` exports them): the task
 * modules the pool was given, and a host's `preloaded` tasks. It imports
 * nothing of a web framework, so a thread is ready in milliseconds. The
 * core's own entry (`thread-entry.ts`) is `threadHandlers()`; a host may
 * build its own entry with its tasks imported into it (the corepool service
 * bundles one, ADR 0019).
 */
import type * as NodeModule from 'node:module';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import type { TaskRequest, TaskResponse } from './task-message';
import type { TaskDefinition } from '../tasks/task-definition';
import { TaskRegistry } from '../tasks/task-registry';
import { createTaskRunner, preciseNow, WARM_UP_TASK } from './task-runner';
import { lowerThreadPriority } from './thread-priority';
import type { ThreadStarted } from './thread-started';
import { releaseBody } from './release-body';
import { ownsWholeBuffer } from './transfer';

export interface ThreadData {
  readonly taskModules: readonly string[];
  /** `WORKER_NICE_INCREMENT`, applied with the thread's first task. */
  readonly niceIncrement: number;
  /** When this thread was spawned (epoch ms, `preciseNow()`); see piscina-options. */
  readonly spawnedAt?: number;
  /** True for the pool's first thread only: it writes Node's compile cache for the others. */
  readonly flushCompileCache?: boolean;
}

/** The exports a thread entry gives Piscina: the task runner, batches, and the recycler's spare. */
export interface ThreadHandlers {
  readonly run: (request: TaskRequest) => Promise<unknown>;
  readonly batch: (requests: readonly TaskRequest[]) => Promise<TaskResponse[]>;
  readonly spare: (request: TaskRequest) => Promise<unknown>;
}

/** Loads this thread's tasks and returns what its entry exports (call it once, at load). */
export function threadHandlers(preloaded: readonly TaskDefinition[] = []): ThreadHandlers {
  const data = (isMainThread ? undefined : workerData) as ThreadData | undefined;
  const runTask = createTaskRunner(TaskRegistry.load(data?.taskModules ?? [], preloaded));
  started(data);
  /** The thread's nice increment, until its first task applies it. */
  let pendingNice = data?.niceIncrement ?? 0;

  /**
   * Lowers the thread's priority before its first task, not when the thread starts (as Piscina's
   * own niceIncrement does) nor once its code is loaded: a thread that replaces one (crashed, or
   * stopped with its cancelled task) under load would finish its start at the lowest priority,
   * behind every busy event loop, many times slower on busy cores; what followed it (Piscina's
   * ready message, the pool's warm-up) waited too (ADR 0021 has the times).
   */
  function beforeTask(request: TaskRequest): void {
    if (pendingNice > 0 && request.task !== WARM_UP_TASK) {
      lowerThreadPriority(pendingNice);
      pendingNice = 0;
    }
  }

  async function run(request: TaskRequest): Promise<unknown> {
    beforeTask(request);
    const response = await runTask(request);
    releaseBody(request.body, response.ok ? response.value : undefined);
    // Bytes a task produces go back by transfer, as large bodies come in.
    if (response.ok && response.value instanceof Uint8Array && ownsWholeBuffer(response.value)) {
      return loadPiscina().move(transferring(response, response.value.buffer));
    }
    return response;
  }

  /**
   * Several small tasks in one message (`thread-batch.ts`, the pool's
   * `BATCH_TASK_NAME`): run one after another, answered together. Batched
   * tasks carry no body, so nothing is transferred.
   */
  async function batch(requests: readonly TaskRequest[]): Promise<TaskResponse[]> {
    const responses: TaskResponse[] = [];
    for (const request of requests) {
      beforeTask(request);
      responses.push(await runTask(request, requests.length));
    }
    return responses;
  }

  // A replacement's first task when a thread is recycled: the same no-op as the warm-up, under
  // its own export name so the pool's balancer gives it only to a thread that has just come up
  // (`thread-recycler.ts`).
  return { run, batch, spare: run };
}

/** The thread's code is loaded: the compile cache and the start time (`piscina-options.ts`). */
function started(data: ThreadData | undefined): void {
  // Node writes its compile cache (piscina-options: threadEnv) when a thread exits, and threads
  // live long: written now by the pool's first thread, its code is cached for every later one.
  // Only the first: loading `node:module` slowed every thread's start (ADR 0021).
  if (data?.flushCompileCache === true) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    (require('node:module') as typeof NodeModule).flushCompileCache();
  }
  // Spawn → code loaded, in ms: Piscina passes the message on as a pool 'message' event.
  if (data?.spawnedAt !== undefined) {
    const started: ThreadStarted = { threadStartMs: preciseNow() - data.spawnedAt };
    parentPort?.postMessage(started);
  }
}

let piscina: typeof Piscina | undefined;
/**
 * Piscina's main module, loaded the first time a task returns bytes: the thread's runtime
 * (Piscina's worker.js) does not need it, and loading it slowed every thread's start (ADR 0050).
 */
const loadPiscina = (): typeof Piscina =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (piscina ??= (require('piscina') as { Piscina: typeof Piscina }).Piscina);

/** Piscina's Transferable protocol: send `response`, transferring `buffer` with it. */
function transferring(response: TaskResponse, buffer: ArrayBufferLike): MovableInput {
  const { transferableSymbol, valueSymbol } = loadPiscina();
  const transferable = { [transferableSymbol]: [buffer], [valueSymbol]: response };
  // Piscina types the protocol with symbols it does not export; the shape is the documented one.
  return transferable as unknown as MovableInput;
}

type MovableInput = Parameters<typeof Piscina.move>[0];
