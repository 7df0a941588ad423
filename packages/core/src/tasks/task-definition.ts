import type { InputSchema } from './input-schema';
import type { TaskContext } from './task-context';

/**
 * The one description of a task, shared by both sides of the pool:
 * the main thread reads `name`, `description`, `input`, `binary` and `limits`
 * for the catalog and for validation, and `size` and `costClass` for the
 * scheduler; a worker thread calls `run`.
 *
 * Files that define tasks import nothing from `@nestjs/*`: threads load them,
 * and a thread should start in milliseconds, not load a web framework.
 */
export interface TaskDefinition<Input extends object = object, Output = unknown> {
  /** URL-safe name: `POST /api/tasks/:name`. */
  readonly name: string;
  /** One sentence for the catalog and the OpenAPI document. */
  readonly description: string;
  /**
   * The input's JSON Schema (`./input-schema` builders, or a plain JSON Schema object).
   * For JSON tasks it checks the body; for binary tasks the query string (the options
   * of the raw-body task). Compiled once on the main thread; threads never check it.
   */
  readonly input: InputSchema<Input>;
  /** Present for tasks whose body is raw bytes instead of JSON. */
  readonly binary?: BinaryTaskOptions<Input>;
  /** The bounds that keep one valid request from running away, for a catalog to list. */
  readonly limits?: Readonly<Record<string, number | string>>;
  /**
   * How much work this input is, in the task's own unit (iterations, bytes,
   * multiply-adds): the scheduler learns each task's time per unit, so an
   * input 40 × larger is estimated 40 × longer and admitted only if that fits
   * its deadline. Left out: every call is estimated at recent calls' times.
   * Runs on the main thread for every request: keep it constant-time.
   */
  size?(input: Input, body: Uint8Array | undefined): number;
  /**
   * What, besides `size`, changes this input's cost per unit: a short label
   * from a small fixed set, for tasks whose options make one unit dearer or
   * cheaper (compress: `gzip-9` against `gzip-1`; pdf-extract: how many pages
   * it reads). The scheduler learns each task's cost per class, so runs of
   * one class never refuse a request of another: without it, another
   * client's dear runs at one size would get a cheap request at that size
   * refused. Keep the classes few (a handful to a few dozen per task): each
   * is measured from its own runs before its estimate refuses anything, and
   * the scheduler keeps at most 1,024 classes over all tasks. Left out: one
   * class per task. Runs on the main thread for every request: keep it
   * constant-time (docs/tasks.md, ADR 0054).
   */
  costClass?(input: Input, body: Uint8Array | undefined): string;
  /**
   * Runs inside a worker thread (or inline when `POOL_THREADS=0`).
   * `body` is the raw request body for binary tasks, otherwise undefined;
   * a large one is freed when the task returns, so the result holds no view
   * of it (return the body itself, or bytes of their own).
   * Return a Uint8Array from a task whose `binary.output` is `'bytes'`.
   * A task that runs for more than a few milliseconds calls
   * `context.throwIfCancelled()` now and then (or passes `context.signal` on),
   * so a cancelled task ends on its own and its thread is kept.
   * `context.progress()` reports how far it is (shown on jobs; a no-op for
   * synchronous requests).
   */
  run(input: Input, body: Uint8Array | undefined, context: TaskContext): Output | Promise<Output>;
}

export interface BinaryTaskOptions<Input extends object = object> {
  /** Accepted request content types, e.g. `['application/octet-stream']`. */
  readonly contentTypes: readonly string[];
  /**
   * A tighter body limit than BINARY_BODY_LIMIT_BYTES, for tasks whose cost
   * grows faster than their input; larger bodies get 413 before they are read.
   */
  readonly maxBodyBytes?: number;
  /**
   * The body cap these options set, for a task whose cost per byte depends on
   * its options (compress: each slow level); undefined when they set none.
   * The options come from the query, so the cap is known before the body:
   * a larger body gets 413 before a byte is read (`Content-Length`) or as
   * soon as it crosses the cap while it streams. Runs on the main thread for
   * every request with a body, with validated options: keep it constant-time.
   * `run` still checks it, for bodies that come another way.
   */
  bodyCapFor?(options: Input): BodyCap | undefined;
  /** What the task returns: JSON (default) or raw bytes sent as the response body. */
  readonly output?: 'json' | 'bytes';
  /** Response content type when `output` is `'bytes'`; may depend on the input. */
  responseContentType?(input: object): string;
}

/** A body cap set by a task's options, and how the refusal explains it. */
export interface BodyCap {
  /** The most bytes the body may have. */
  readonly maxBytes: number;
  /**
   * The refusal's detail: which option sets the cap and what to change, e.g.
   * "br level 11 accepts at most 1 MiB; …". `bodyBytes` is the body's size
   * when it is known (`Content-Length`, or a body already read).
   */
  explain(bodyBytes: number | undefined): string;
}

/** Helps TypeScript tie `Input` to the input schema while keeping the registry uniform. */
export function defineTask<Input extends object, Output>(
  definition: TaskDefinition<Input, Output>,
): TaskDefinition<Input, Output> {
  return Object.freeze(definition);
}
