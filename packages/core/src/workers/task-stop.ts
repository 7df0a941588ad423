import { Cancellation, onCancel } from './cancellation';
import { CancelFlagPool, requestCancel, runningOn, type CancelFlag } from './cancel-flag';
import type { AbortReason } from './task-failure';

/** The flags of every task of this thread (the main thread: one pool per process). */
const flags = new CancelFlagPool();

/**
 * How one task in flight is stopped, main side. The pool aborts `cancellation`
 * (deadline, client gone, job cancelled, shutdown); that sets the task's
 * shared flag at once, so a task that checks it returns on its own and keeps
 * its thread. Only if it is still running `graceMs` later is `termination`
 * aborted, which Piscina answers by terminating the thread. A task over its
 * memory budget is terminated at once: its memory may be growing fast.
 */
export class TaskStop {
  readonly flag: CancelFlag = flags.acquire();
  /** Piscina's signal for the task: aborting it terminates the thread that runs it. */
  readonly termination = new Cancellation();
  private graceTimer: NodeJS.Timeout | undefined;
  private posted = false;
  private readonly stopFollowing: () => void;

  constructor(
    readonly cancellation: Cancellation<AbortReason>,
    private readonly graceMs: number,
  ) {
    this.stopFollowing = onCancel(cancellation, () => this.stop());
  }

  /** The task was handed to Piscina (it left corepool's own queue). */
  markPosted(): void {
    this.posted = true;
  }

  /**
   * The task's thread was terminated: it had been handed to Piscina when the
   * grace ran out. (A task still in Piscina's own queue, which holds tasks
   * only while a thread is being replaced, is counted too: Piscina does not
   * say which of the two it was. Counting only tasks that had started would
   * miss the thread of one posted to a thread too starved to start it.)
   */
  get terminatedThread(): boolean {
    return this.posted && this.termination.aborted;
  }

  /** The thread that runs the task; 0 while it has not started, and once it has ended. */
  get threadId(): number {
    return runningOn(this.flag);
  }

  /** The task ended (answered or rejected): nothing more to stop; its flag serves another task. */
  dispose(): void {
    clearTimeout(this.graceTimer);
    this.stopFollowing();
    flags.release(this.flag);
  }

  private stop(): void {
    requestCancel(this.flag);
    if (this.cancellation.reason === 'memory' || this.graceMs === 0) {
      this.termination.abort('terminated');
      return;
    }
    this.graceTimer = setTimeout(() => this.termination.abort('terminated'), this.graceMs);
  }
}
