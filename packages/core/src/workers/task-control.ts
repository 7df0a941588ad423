import { Cancellation, onCancel, type CancelSignal } from './cancellation';
import type { AbortReason } from './task-failure';
import { TaskStop } from './task-stop';

/**
 * One task's deadline and cancellation, from the moment the pool takes it
 * until it has ended: the deadline's timer, the caller's signal (the client
 * went away, the job was cancelled) and how the task is stopped once either
 * aborts (`task-stop.ts`).
 */
export class TaskControl {
  readonly cancellation = new Cancellation<AbortReason>();
  readonly stop: TaskStop;
  private readonly timer: NodeJS.Timeout;
  private readonly stopFollowing: (() => void) | undefined;

  constructor(remainingMs: number, graceMs: number, signal: CancelSignal | undefined) {
    this.stop = new TaskStop(this.cancellation, graceMs);
    // Whole milliseconds: Node keeps one list per distinct duration, so timers of equal
    // duration share one (an append), where a fractional one would make a list of its own.
    this.timer = setTimeout(
      () => this.cancellation.abort('timeout'),
      Math.max(0, Math.ceil(remainingMs)),
    );
    this.stopFollowing =
      signal === undefined
        ? undefined
        : onCancel(signal, () => this.cancellation.abort('cancelled'));
  }

  /** Why the task was aborted; undefined while it was not. */
  get abortedFor(): AbortReason | undefined {
    return this.cancellation.aborted ? this.cancellation.reason : undefined;
  }

  /** The task answered or failed: its deadline no longer matters. */
  endDeadline(): void {
    clearTimeout(this.timer);
  }

  /** The task has ended: the caller's signal is no longer followed, and its stop is freed. */
  release(): void {
    this.stopFollowing?.();
    this.stop.dispose();
  }
}
