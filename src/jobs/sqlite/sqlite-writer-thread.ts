import { parentPort, workerData } from 'node:worker_threads';
import { AppError, type ErrorFacts } from '../../common/app-error';
import { SqliteJobStore, type SqliteStoreOptions } from './sqlite-job-store';
import { ownsWholeBuffer } from '../../workers/transfer';
import { SqliteJobWriter } from './sqlite-job-writer';
import type { WriteMethod } from './sqlite-writes';

/** A write the event loop asks for: its id, the store method, its arguments, and whether it is a claim. */
export type WriteRequest = readonly [
  id: number,
  method: WriteMethod,
  args: unknown[],
  last: boolean,
];
/** An error as it crosses back: AppErrors keep their code and facts. */
export interface CrossedError {
  readonly message: string;
  readonly code?: string;
  readonly facts?: ErrorFacts;
}
export type WriteReply = readonly [id: number, ok: boolean, value: unknown];
/** Sent after the replies to a `close`: nothing follows it. */
export const CLOSED = 'closed';

/**
 * The writer thread's entry (`sqlite-write-thread.ts` starts it): the group
 * commit (`SqliteJobWriter`) on a connection of its own, fed by messages.
 * The calls that arrive in one turn of this thread's loop commit together,
 * and their replies go back in one message.
 */
function serve(): void {
  const port = parentPort;
  if (port === null) return;
  // Asleep while another process holds the lock: nothing else runs on this thread.
  const writer = new SqliteJobWriter(
    new SqliteJobStore({ ...(workerData as SqliteStoreOptions), busyTimeoutMs: 0 }),
    { blockOnLock: true },
  );
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

serve();
