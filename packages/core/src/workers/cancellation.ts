import { EventEmitter } from 'node:events';

/**
 * A one-shot "abort" in the EventEmitter form Piscina accepts as a task's
 * signal (it listens with `once('abort')` and reads `aborted` and `reason`).
 *
 * Every task needs one, for its deadline, its client and a shutdown. Two
 * AbortControllers with the listeners a task adds and removes cost a tiny
 * task a noticeable share of its request; this, a small fraction of that
 * (ADR 0050).
 */
export class Cancellation<Reason = unknown> extends EventEmitter {
  aborted = false;
  reason: Reason | undefined;

  /** The first call wins; later ones change nothing. */
  abort(reason: Reason): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

/** What can cancel a task: a standard AbortSignal or a Cancellation. */
export type CancelSignal = AbortSignal | Cancellation;

/**
 * Calls `listener` once when `signal` aborts (at once if it already has);
 * returns the function that stops listening.
 */
export function onCancel(signal: CancelSignal, listener: () => void): () => void {
  if (signal.aborted) {
    listener();
    return () => undefined;
  }
  if (signal instanceof Cancellation) {
    signal.once('abort', listener);
    return () => signal.off('abort', listener);
  }
  signal.addEventListener('abort', listener, { once: true });
  return () => signal.removeEventListener('abort', listener);
}
