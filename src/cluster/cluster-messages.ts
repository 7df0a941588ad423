import { TaskPressure } from './task-pressure';

/**
 * Messages between the cluster primary and its HTTP processes. Every message
 * carries a `corepool:`-prefixed `type`, so other messages on the same IPC
 * channel (metrics, for one) are left to whoever handles them.
 */
export const READY_MESSAGE = Object.freeze({ type: 'corepool:ready' });

/**
 * Primary → process: a new process is ready; stop accepting for at most
 * `maxMs` and move `fraction` of your connections, so that it gets its share
 * (ADR 0018).
 */
export interface MakeRoomMessage {
  readonly type: 'corepool:make-room';
  readonly maxMs: number;
  readonly fraction: number;
  /** What `fraction` is of: every open connection (ADR 0018), or the requests in flight (ADR 0027). */
  readonly of?: MakeRoomShare;
}

export type MakeRoomShare = 'connections' | 'requests';

/**
 * Primary → process: a process died; accept again now, ending any hold. A
 * hold counts on another process accepting: with that one dead, the listener
 * would be closed everywhere, and new connections refused, until it ran out.
 */
export const ACCEPT_MESSAGE = Object.freeze({ type: 'corepool:accept' });

/**
 * Process → primary, every `LOAD_REPORT_MS`: requests answered since the last
 * report, and the mean tasks in flight per thread over it (ADR 0027).
 */
export interface LoadMessage {
  readonly type: 'corepool:load';
  readonly answered: number;
  readonly tasksPerThread: number;
}

/** What the primary reads from a load report. */
export type LoadReport = Pick<LoadMessage, 'answered' | 'tasksPerThread'>;

/** How often a process reports its load to the primary. */
export const LOAD_REPORT_MS = 1_000;

function typeOf(message: unknown): unknown {
  return typeof message === 'object' && message !== null
    ? (message as { type?: unknown }).type
    : undefined;
}

export function isReadyMessage(message: unknown): boolean {
  return typeOf(message) === READY_MESSAGE.type;
}

/** The figures of a load report, or undefined for any other message. */
export function loadIn(message: unknown): LoadReport | undefined {
  if (typeOf(message) !== 'corepool:load') return undefined;
  const { answered, tasksPerThread } = message as LoadMessage;
  // A process of an older build during a rolling reload reports no tasks: count none.
  return { answered, tasksPerThread: typeof tasksPerThread === 'number' ? tasksPerThread : 0 };
}

export function makeRoomMessage(
  maxMs: number,
  fraction: number,
  of: MakeRoomShare = 'connections',
): MakeRoomMessage {
  return { type: 'corepool:make-room', maxMs, fraction, of };
}

/** Tells the primary (if there is one) that this process listens with warm threads. */
export function notifyPrimaryReady(): void {
  process.send?.(READY_MESSAGE);
}

/** What a process does when the primary asks it to make room, and what it reports (ShutdownService). */
export interface RoomMaker {
  makeRoom(maxMs: number, fraction: number, of?: MakeRoomShare): void;
  acceptAgain(): void;
  takeAnswered(): number;
}

/**
 * Follows the primary's make-room and accept messages and reports this process's load
 * to it every `LOAD_REPORT_MS`, if this process has a primary.
 * `tasksPerThread` gives the pool's tasks in flight per thread now.
 */
export function followPrimary(
  process_: NodeJS.Process,
  room: RoomMaker,
  tasksPerThread: () => number,
): void {
  if (process_.send === undefined) return;
  const pressure = new TaskPressure(tasksPerThread);
  setInterval(() => {
    const report: LoadMessage = {
      type: 'corepool:load',
      answered: room.takeAnswered(),
      tasksPerThread: pressure.take(),
    };
    // A primary that went away meanwhile needs no report; the callback keeps a failed send quiet.
    if (process_.connected) process_.send?.(report, undefined, undefined, () => undefined);
  }, LOAD_REPORT_MS).unref();
  process_.on('message', (message: unknown) => {
    const type = typeOf(message);
    if (type === 'corepool:make-room') {
      const { maxMs, fraction, of } = message as MakeRoomMessage;
      room.makeRoom(maxMs, fraction, of === 'requests' ? 'requests' : 'connections');
    } else if (type === ACCEPT_MESSAGE.type) {
      room.acceptAgain();
    }
  });
}
