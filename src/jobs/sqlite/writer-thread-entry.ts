import { parentPort, workerData } from 'node:worker_threads';
import { AppError, Errors } from '../../common/app-error';
import { ownsWholeBuffer } from '@corepool/core/host';
import { GroupCommit } from './group-commit';
import { SqliteJobStore, type SqliteStoreOptions } from './sqlite-job-store';
import { checkStoreFile, processUser } from './store-file-check';
import {
  CLOSED,
  type CrossedError,
  type StoreLostMessage,
  type WriteReply,
  type WriteRequest,
} from './writer-thread-messages';

/**
 * The code that runs on the writer thread (this file is the thread's entry;
 * `WriterThreadClient` starts it): the group commit (`GroupCommit`) on a
 * connection of its own, fed by messages (`writer-thread-messages.ts`). The
 * calls that arrive in one turn of this thread's loop commit together, and
 * their replies go back in one message (ADR 0022).
 */
function serveGroupCommit(): void {
  const port = parentPort;
  if (port === null) return;
  const store = new SqliteJobStore({ ...(workerData as SqliteStoreOptions), busyTimeoutMs: 0 });
  const user = processUser();
  // Asleep while another process holds the lock: nothing else runs on this thread.
  const writer = new GroupCommit(store, {
    blockOnLock: true,
    // One `stat` per commit, on this thread: a submission is acknowledged only once the file it
    // was committed to is still the store at its path (ADR 0042).
    confirm: () => {
      const { opened } = store;
      if (!('identity' in opened)) return undefined;
      const lost = checkStoreFile(opened.identity, user);
      if (lost === undefined) return undefined;
      // Before the replies it refuses: the event loop refuses the next calls itself.
      port.postMessage({ lost } satisfies StoreLostMessage);
      return Errors.queueUnavailable(`SQLite job store ${lost.problem}: ${lost.message}`);
    },
  });
  let replies: WriteReply[] = [];
  let transfer: ArrayBuffer[] = [];
  // After the reactions of one commit have all run (queued before this one): one message for them.
  const send = () => {
    port.postMessage(replies, transfer);
    replies = [];
    transfer = [];
  };
  const reply = (entry: WriteReply, buffers: ArrayBuffer[] = []) => {
    if (replies.length === 0) queueMicrotask(send);
    replies.push(entry);
    transfer.push(...buffers);
  };
  port.on('message', (message: WriteRequest | typeof CLOSED) => {
    if (message === CLOSED) {
      void writer.close();
      // Immediate: after the microtasks that reply to the calls close() answered or refused.
      setImmediate(() => {
        port.postMessage(CLOSED);
        port.close();
      });
      return;
    }
    const [id, method, args, last] = message;
    writer.call(method, args as never, { last }).then(
      (value) => reply([id, true, value], ownedBodies(value)),
      (error: unknown) => reply([id, false, crossed(error)]),
    );
  });
}

function crossed(error: unknown): CrossedError {
  if (error instanceof AppError) {
    return { message: error.message, code: error.code, facts: error.facts };
  }
  return { message: (error as Error)?.message ?? String(error) };
}

/** Claimed jobs' bodies: read from the file for this reply alone, so moved rather than copied. */
function ownedBodies(value: unknown): ArrayBuffer[] {
  if (!Array.isArray(value)) return [];
  const buffers: ArrayBuffer[] = [];
  for (const item of value as Array<{ payload?: { body?: Uint8Array } }>) {
    const body = item?.payload?.body;
    if (body instanceof Uint8Array && ownsWholeBuffer(body))
      buffers.push(body.buffer as ArrayBuffer);
  }
  return buffers;
}

serveGroupCommit();
