import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { AppError, Errors } from '../../common/app-error';
import type { ErrorCode } from '../../common/error-codes';
import type { SqliteStoreOptions } from './sqlite-job-store';
import type { StoreFileFinding } from './store-file-check';
import {
  StoreWriter,
  type WriteArgs,
  type WriteMethod,
  type WriteOptions,
  type WriteResult,
} from './store-writer';
import {
  CLOSED,
  type CrossedError,
  type StoreLostMessage,
  type WriteReply,
  type WriteRequest,
} from './writer-thread-messages';

interface Pending {
  readonly resolve: (value: never) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The event loop's side of this process's writer thread (ADR 0022): it
 * starts the thread (`writer-thread-entry.ts`), posts each call to it, and
 * settles the call when the reply to its group's commit comes back. The
 * statements, the commits and the retries on another process's lock all run
 * on the thread, because on the event loop they held it a large share of the
 * time under load (ADR 0017, ADR 0022). Reads stay on the event loop (WAL:
 * they never wait for the writer).
 *
 * Arguments and results cross by structured clone: a submitted body is
 * copied (the request may still hold it), a claimed job's body is moved.
 * A thread that dies fails its pending calls with QUEUE_UNAVAILABLE and is
 * started again by the next call.
 */
export class WriterThreadClient extends StoreWriter {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  /**
   * `options`: read when the thread starts, so that it opens the store its
   * process's reads opened, even one they opened late (`SqliteStoreWatch`).
   * `refusal`: why no write may go to the file now (`SqliteStoreWatch`): a
   * store deleted, moved or replaced while open takes writes nobody will read.
   * `onLost`: the thread found so after a commit, and refused its callers.
   */
  constructor(
    private readonly options: SqliteStoreOptions | (() => SqliteStoreOptions),
    private readonly refusal: () => Error | undefined = () => undefined,
    private readonly onLost: (finding: StoreFileFinding) => void = () => undefined,
  ) {
    super();
    // Without a store to write, the thread waits for the first call the store lets through.
    if (refusal() === undefined) this.worker = this.start();
  }

  call<M extends WriteMethod>(
    method: M,
    args: WriteArgs<M>,
    options: WriteOptions = {},
  ): Promise<WriteResult<M>> {
    if (this.closed) return Promise.reject(Errors.queueUnavailable('SQLite: the store is closed'));
    const refused = this.refusal();
    if (refused !== undefined) return Promise.reject(refused);
    const id = this.nextId++;
    this.worker ??= this.start();
    const worker = this.worker;
    return new Promise<WriteResult<M>>((resolve, reject) => {
      // A call waiting keeps the process alive, as a write on the event loop would have.
      if (this.pending.size === 0) worker.ref();
      this.pending.set(id, { resolve, reject });
      const request: WriteRequest = [id, method, args, options.last === true];
      worker.postMessage(request);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    if (worker === undefined) return;
    // The thread writes what it can, refuses the rest, replies, then says it closed.
    worker.ref();
    await new Promise<void>((resolve) => {
      worker.on('message', (message) => message === CLOSED && resolve());
      worker.once('exit', () => resolve());
      worker.postMessage(CLOSED);
    });
    await worker.terminate();
  }

  private start(): Worker {
    const extension = extname(__filename);
    const worker = new Worker(join(__dirname, `writer-thread-entry${extension}`), {
      workerData: typeof this.options === 'function' ? this.options() : this.options,
      // The thread's name in `top -H` and /proc (Node 24 names the OS thread after it).
      name: 'sqlite-writer',
      // In jest and development the entry is TypeScript, compiled by tsx in the thread.
      execArgv: extension === '.ts' ? ['--require', require.resolve('tsx/cjs')] : undefined,
    });
    worker.on('message', (message: WriteReply[] | StoreLostMessage | typeof CLOSED) => {
      if (message === CLOSED) return;
      if (Array.isArray(message)) this.settle(message);
      else this.onLost(message.lost);
    });
    // The exit that follows says what matters to the callers.
    worker.on('error', () => undefined);
    worker.once('exit', () => {
      if (this.worker === worker) this.worker = undefined;
      const stopped = Errors.queueUnavailable('SQLite: the writer thread stopped');
      for (const { reject } of this.pending.values()) reject(stopped);
      this.pending.clear();
    });
    // Idle, it never keeps the process alive by itself (see `call`).
    worker.unref();
    return worker;
  }

  private settle(replies: WriteReply[]): void {
    for (const [id, ok, value] of replies) {
      const pending = this.pending.get(id);
      if (pending === undefined) continue;
      this.pending.delete(id);
      if (ok) pending.resolve(value as never);
      else pending.reject(uncrossed(value as CrossedError));
    }
    if (this.pending.size === 0) this.worker?.unref();
  }
}

function uncrossed({ message, code, facts }: CrossedError): Error {
  return code === undefined ? new Error(message) : new AppError(code as ErrorCode, message, facts);
}
