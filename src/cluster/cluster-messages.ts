/**
 * Messages between the cluster primary and its HTTP processes. Every message
 * carries a `corepool:`-prefixed `type`, so other messages on the same IPC
 * channel (metrics, for one) are left to whoever handles them.
 */
export const READY_MESSAGE = Object.freeze({ type: 'corepool:ready' });

export function isReadyMessage(message: unknown): boolean {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { type?: unknown }).type === READY_MESSAGE.type
  );
}

/** Tells the primary (if there is one) that this process listens with warm threads. */
export function notifyPrimaryReady(): void {
  process.send?.(READY_MESSAGE);
}
