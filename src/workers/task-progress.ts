import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { TaskContext } from '../tasks/task-context';

/** At most one report per this many milliseconds leaves a task's thread. */
export const PROGRESS_INTERVAL_MS = 100;

/** A task's progress as it reached the main thread. */
export interface TaskProgress {
  /** 0..1 */
  readonly fraction: number;
  readonly message?: string;
}

/** What crosses the task's port: reports, then one end marker. */
type ProgressMessage =
  { readonly kind: 'progress'; readonly progress: TaskProgress } | { readonly kind: 'end' };

const MAX_MESSAGE_CHARS = 200;

/**
 * Thread side: a task context's `progress`, whose reports go out on `port`, rate-limited (the
 * latest report waits for the next slot, and is flushed at the end, so the
 * last one is never lost). `end()` flushes, posts the end marker and closes
 * the port: nothing is posted after the task's result.
 */
export function portReporter(
  port: MessagePort,
  now: () => number = Date.now,
): {
  report: TaskContext['progress'];
  end(): void;
} {
  let sentAt = -Infinity;
  let pending: TaskProgress | undefined;
  let ended = false;
  const send = (progress: TaskProgress) => {
    sentAt = now();
    pending = undefined;
    port.postMessage({ kind: 'progress', progress } satisfies ProgressMessage);
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
      if (ended) return;
      ended = true;
      if (pending !== undefined) send(pending);
      port.postMessage({ kind: 'end' } satisfies ProgressMessage);
      port.close();
    },
  };
}

/**
 * Main side: a channel for one task. `port` goes to the thread (transferred);
 * reports reach `onProgress` until the end marker. The task's answer travels
 * on another port and may arrive first: `finish()` waits (at most
 * `waitMs`) for the end marker, or for the port to close with a thread that
 * died, so the last report is delivered before the result, and none after.
 */
export function progressChannel(onProgress: (progress: TaskProgress) => void): {
  port: MessagePort;
  finish(waitMs: number): Promise<void>;
} {
  const { port1, port2 } = new MessageChannel();
  let open = true;
  let ended: () => void = () => undefined;
  const endSeen = new Promise<void>((resolve) => {
    ended = resolve;
  });
  const close = () => {
    open = false;
    port1.close();
    ended();
  };
  port1.on('message', (message: ProgressMessage) => {
    if (!open) return;
    if (message.kind === 'end') close();
    else onProgress(message.progress);
  });
  port1.once('close', close);
  return {
    port: port2,
    async finish(waitMs) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        endSeen,
        new Promise((resolve) => {
          timer = setTimeout(resolve, waitMs);
        }),
      ]);
      clearTimeout(timer);
      close();
    },
  };
}

/** A fraction clamped to 0..1 and a short message; a report that is not a number is ignored. */
function normalise(fraction: number, message: string | undefined): TaskProgress | undefined {
  if (typeof fraction !== 'number' || Number.isNaN(fraction)) return undefined;
  const clamped = Math.min(1, Math.max(0, fraction));
  return typeof message === 'string'
    ? { fraction: clamped, message: message.slice(0, MAX_MESSAGE_CHARS) }
    : { fraction: clamped };
}
