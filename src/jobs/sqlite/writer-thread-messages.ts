import type { ErrorFacts } from '../../common/app-error';
import type { StoreFileFinding } from './store-file-check';
import type { WriteMethod } from './store-writer';

/**
 * The messages between a process's event loop (`writer-thread-client.ts`) and
 * its writer thread (`writer-thread-entry.ts`). Plain data: they cross by
 * structured clone (ADR 0022).
 */

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
/** Sent both ways: asks the thread to close, then says it closed (nothing follows it). */
export const CLOSED = 'closed';
/**
 * From the thread, before the replies it refuses: the file it committed to is
 * no longer the store at its path (ADR 0042). The event loop's watch takes it
 * at once, instead of at its next periodic check.
 */
export interface StoreLostMessage {
  readonly lost: StoreFileFinding;
}
