import type { TaskContext } from '../tasks/task-context';

/** At most one report per this many milliseconds leaves a task's thread. */
export const PROGRESS_INTERVAL_MS = 100;

/** A task's progress as it reached the main thread. */
export interface TaskProgress {
  /** 0..1 */
  readonly fraction: number;
  readonly message?: string;
}

/** A report as it crosses from a thread: the id the main thread gave the task, and the report. */
export interface ProgressMessage {
  readonly type: typeof PROGRESS_MESSAGE;
  readonly id: number;
  readonly progress: TaskProgress;
}

const PROGRESS_MESSAGE = 'corepool:progress';
const MAX_MESSAGE_CHARS = 200;

export function isProgressMessage(message: unknown): message is ProgressMessage {
  return (message as ProgressMessage | null)?.type === PROGRESS_MESSAGE;
}

/**
 * Thread side: a task context's `progress`, whose reports leave through
 * `post` (the thread's `parentPort`, which Piscina hands to the pool's
 * `message` event), rate-limited: the latest report waits for the next slot
 * and is flushed at the end, so the last one is never lost. `end()` flushes
 * and returns how many reports left, which the task's answer carries: the
 * main thread waits for that many before it settles the task, since the
 * answer travels on another port and may arrive first.
 */
export function progressReporter(
  id: number,
  post: (message: ProgressMessage) => void,
  now: () => number = Date.now,
): {
  report: TaskContext['progress'];
  end(): number;
} {
  let sentAt = -Infinity;
  let pending: TaskProgress | undefined;
  let sent = 0;
  let ended = false;
  const send = (progress: TaskProgress) => {
    sentAt = now();
    pending = undefined;
    sent += 1;
    post({ type: PROGRESS_MESSAGE, id, progress });
  };
  return {
    report(fraction, message) {
      if (ended) return;
      const report = normalise(fraction, message);
      if (report === undefined) return;
      if (now() - sentAt >= PROGRESS_INTERVAL_MS) send(report);
      else pending = report;
    },
    end() {
      if (!ended) {
        ended = true;
        if (pending !== undefined) send(pending);
      }
      return sent;
    },
  };
}

interface Follower {
  readonly onProgress: (progress: TaskProgress) => void;
  received: number;
  /** Set while the task's answer waits for its last reports. */
  expected?: { count: number; done: () => void };
}

/**
 * Main side: every followed task's reports, from every thread, routed by
 * the task's id (one channel for the pool, not one per task: a
 * `MessageChannel` per task and its end marker were a measurable share of
 * the event loop under jobs, ADR 0030). A task that reports nothing costs a map entry.
 */
export class ProgressRouter {
  private readonly followers = new Map<number, Follower>();
  private nextId = 1;

  /** Follows a task: its id for the request, and `finish` for when its answer arrived. */
  follow(onProgress: (progress: TaskProgress) => void): {
    id: number;
    /**
     * Waits (at most `waitMs`) until `reports` reports were delivered — what
     * the task's answer says it sent; none when unknown (the thread died) —
     * then stops following: no report reaches `onProgress` after it.
     */
    finish(reports: number, waitMs: number): Promise<void>;
  } {
    const id = this.nextId++;
    const follower: Follower = { onProgress, received: 0 };
    this.followers.set(id, follower);
    return {
      id,
      finish: async (reports, waitMs) => {
        if (follower.received < reports && waitMs > 0) {
          let timer: NodeJS.Timeout | undefined;
          await new Promise<void>((done) => {
            follower.expected = { count: reports, done };
            timer = setTimeout(done, waitMs);
          });
          clearTimeout(timer);
        }
        this.followers.delete(id);
      },
    };
  }

  /** A report from a thread; one for a task no longer followed is dropped. */
  deliver({ id, progress }: ProgressMessage): void {
    const follower = this.followers.get(id);
    if (follower === undefined) return;
    follower.received += 1;
    follower.onProgress(progress);
    if (follower.expected !== undefined && follower.received >= follower.expected.count) {
      follower.expected.done();
    }
  }
}

/** A fraction clamped to 0..1 and a short message; a report that is not a number is ignored. */
function normalise(fraction: number, message: string | undefined): TaskProgress | undefined {
  if (typeof fraction !== 'number' || Number.isNaN(fraction)) return undefined;
  const clamped = Math.min(1, Math.max(0, fraction));
  return typeof message === 'string'
    ? { fraction: clamped, message: message.slice(0, MAX_MESSAGE_CHARS) }
    : { fraction: clamped };
}
