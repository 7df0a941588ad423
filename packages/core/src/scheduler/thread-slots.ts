import { JOBS_CLIENT_KEY as JOBS_KEY } from './client-keys';
import type { WorkMeasure } from './fair-queue';
import type { BatchOptions } from './scheduler-types';
import type { Running, Waiting } from './waiting';

/** What the slots need of their scheduler. */
export interface ThreadSlotsHost {
  readonly slots: number;
  readonly jobsMaxThreads: number;
  readonly batch?: BatchOptions;
  now(): number;
  /** Estimates a task anew if the cost model learnt since its last estimate. */
  refresh(waiting: Waiting): void;
  /** A task ended on its thread, `completed` or stopped, after `runMs` of its thread's time. */
  ran(waiting: Waiting, completed: boolean, runMs: number): void;
  /** A slot is free again. */
  freed(): void;
}

/** Whether a waiting task may join a batch with `budgetMs` of its estimate left: jobs never do. */
export function joinsBatch(waiting: Waiting, budgetMs: number): boolean {
  return waiting.batchable && waiting.key !== JOBS_KEY && waiting.cost <= budgetMs;
}

/**
 * The threads' slots: one task, or one batch of small ones, per thread; jobs
 * capped at their own threads. Knows what runs where, and when each thread
 * frees up by the running tasks' estimates.
 */
export class ThreadSlots {
  private readonly running = new Set<Running>();
  private jobsRunning = 0;
  /** Batches sent, and the tasks they carried. */
  readonly batches = { sent: 0, tasks: 0 };

  constructor(private readonly host: ThreadSlotsHost) {}

  /** A slot is free. */
  get free(): boolean {
    return this.running.size < this.host.slots;
  }

  /** Threads that run jobs now. */
  get jobs(): number {
    return this.jobsRunning;
  }

  /** Jobs may not take more than their threads; every other key may take any free one. */
  eligible(key: string): boolean {
    return key !== JOBS_KEY || this.jobsRunning < this.host.jobsMaxThreads;
  }

  /** When each thread frees up, in ms from now, by the running tasks' estimates or floors. */
  freeAt(now: number, measure: WorkMeasure): number[] {
    const freeAt: number[] = [];
    for (const thread of this.running) {
      let ms = 0;
      for (const member of thread.members) {
        // What the model learnt since the task started counts too: a cold burst's
        // first runs tell what the ones still running will take.
        this.host.refresh(member);
        ms += measure === 'cost' ? member.cost : member.floorMs;
      }
      freeAt.push(Math.max(0, ms - (now - thread.startedAt)));
    }
    while (freeAt.length < this.host.slots) freeAt.push(0);
    return freeAt;
  }

  /**
   * Starts a task, or a batch of them, on one thread slot; the slot is free
   * again once every one of them has settled. A batch's thread runs its tasks
   * one after another and answers them together: each is recorded at its
   * share of the batch's time.
   */
  begin(members: readonly Waiting[]): void {
    const thread: Running = { members, startedAt: this.host.now() };
    this.running.add(thread);
    const [first] = members as [Waiting];
    const jobs = first.key === JOBS_KEY;
    if (jobs) this.jobsRunning += 1;
    let unsettled = members.length;
    const batch = members.length > 1 ? this.host.batch?.open() : undefined;
    if (batch !== undefined) {
      this.batches.sent += 1;
      this.batches.tasks += members.length;
    }
    for (const member of members) {
      member.begin(batch, (completed, threadMs) => {
        const elapsed = (this.host.now() - thread.startedAt) / members.length;
        this.host.ran(member, completed, completed ? (threadMs ?? elapsed) : elapsed);
        unsettled -= 1;
        if (unsettled > 0) return;
        this.running.delete(thread);
        if (jobs) this.jobsRunning -= 1;
        this.host.freed();
      });
    }
    batch?.close();
  }
}
