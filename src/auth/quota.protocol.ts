// The IPC messages between cluster processes and the primary, which holds
// every client's quota counters so a client's limits hold across processes.
// No Nest here: the primary stays light.

/** Process → primary: count one request of `key` in its current window. */
export interface RateHit {
  readonly type: 'corepool:quota:hit';
  readonly id: number;
  readonly key: string;
  readonly windowMs: number;
}

/** Primary → process: the requests of `key` in the window so far, and ms until it ends. */
export interface RateCount {
  readonly type: 'corepool:quota:count';
  readonly id: number;
  readonly current: number;
  readonly ttl: number;
}

/** Process → primary: take one of `key`'s task slots, if fewer than `max` are taken. */
export interface SlotAcquire {
  readonly type: 'corepool:quota:acquire';
  readonly id: number;
  readonly key: string;
  readonly max: number;
}

/** Primary → process: whether the slot was granted. */
export interface SlotGrant {
  readonly type: 'corepool:quota:grant';
  readonly id: number;
  readonly granted: boolean;
}

/** Process → primary: give back one of `key`'s task slots. */
export interface SlotRelease {
  readonly type: 'corepool:quota:release';
  readonly key: string;
}

export type QuotaRequest = RateHit | SlotAcquire | SlotRelease;
export type QuotaAnswer = RateCount | SlotGrant;

/** How long a process waits for the primary before it lets the request through. */
export const QUOTA_ANSWER_TIMEOUT_MS = 1_000;

const QUOTA_REQUESTS = new Set([
  'corepool:quota:hit',
  'corepool:quota:acquire',
  'corepool:quota:release',
]);
const QUOTA_ANSWERS = new Set(['corepool:quota:count', 'corepool:quota:grant']);

const typeOf = (message: unknown): unknown =>
  typeof message === 'object' && message !== null
    ? (message as { type?: unknown }).type
    : undefined;

// Other modules share the IPC channel; each side ignores messages that are not its own.
export const isQuotaRequest = (message: unknown): message is QuotaRequest =>
  QUOTA_REQUESTS.has(typeOf(message) as string);
export const isQuotaAnswer = (message: unknown): message is QuotaAnswer =>
  QUOTA_ANSWERS.has(typeOf(message) as string);
