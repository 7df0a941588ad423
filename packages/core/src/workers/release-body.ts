import { ownsWholeBuffer, TRANSFER_THRESHOLD_BYTES } from './transfer';

/**
 * Frees a transferred body as soon as its task has answered, instead of at
 * the thread's next garbage collection: a Piscina thread waits for its next
 * task in `Atomics.wait`, so an idle thread neither turns its event loop nor
 * collects, and after a burst of large uploads the last bodies stayed
 * resident for good (ADR 0050). Detaching the ArrayBuffer drops V8's hold on
 * its memory at once. Not when the answer is a view of the same buffer: that
 * one is moved back to the event loop with the answer.
 */
export function releaseBody(body: Uint8Array | undefined, answer: unknown): void {
  if (body === undefined || body.byteLength < TRANSFER_THRESHOLD_BYTES) return;
  if (!ownsWholeBuffer(body)) return;
  if (answer instanceof Uint8Array && answer.buffer === body.buffer) return;
  const buffer = body.buffer as ArrayBuffer;
  if (!buffer.detached) buffer.transfer(0);
}
