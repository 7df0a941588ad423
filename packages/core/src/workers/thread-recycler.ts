import type { Worker } from 'node:worker_threads';
import type { Piscina } from 'piscina';

// Piscina exports these types only from an internal path; derive them from its public options.
type PiscinaLoadBalancer = NonNullable<
  NonNullable<ConstructorParameters<typeof Piscina>[0]>['loadBalancer']
>;
type PiscinaWorker = Parameters<PiscinaLoadBalancer>[1][number];

/** Why a thread is recycled: its share of tasks, or its heap after a task. */
export type RecycleCause = 'recycled_tasks' | 'recycled_memory';

/** The export of the thread entry that a replacement's first task goes to (`spare`). */
export const SPARE_TASK_NAME = 'spare';

export interface RecyclerOptions {
  /** `WORKER_MAX_TASKS`: about this many tasks per thread; 0 never. */
  readonly maxTasksPerThread: number;
  /** `WORKER_RECYCLE_HEAP_MB` in bytes: heap in use after a task past which a thread goes; 0 never. */
  readonly recycleHeapBytes: number;
  /** The pool's size. */
  readonly size: number;
  /** The pool's threads now (Piscina's `threads`). */
  readonly threads: () => readonly Worker[];
  /** Asks Piscina for one more thread (a task only a new thread may take); see `spare`. */
  readonly requestSpare: () => void;
  /** A thread is retired, and why. */
  readonly onRecycled: (cause: RecycleCause) => void;
  /** 0..1; the shares' jitter. */
  readonly random?: () => number;
}

/**
 * Recycling (`WORKER_MAX_TASKS`, `WORKER_RECYCLE_HEAP_MB`), the `max_requests`
 * of Octane and Swoole, without ever leaving the pool a thread short.
 *
 * Piscina has no such option, but it lets us choose which thread gets each
 * task, and it starts a thread when a task finds none it may take. A thread
 * that is due (its share of tasks assigned, or its heap too large after a
 * task) keeps working while the pool asks for a spare: a task that only a new
 * thread may take, so Piscina starts one (the pool allows one thread above
 * its size for this). Only when the spare has loaded its code is the due
 * thread retired: it gets no more tasks and is terminated once idle. Each
 * thread draws its share within ±20 % of `WORKER_MAX_TASKS`, so threads
 * started together do not all come due together; one spare at a time.
 *
 * Tasks are counted when they are assigned, not when their results arrive,
 * so a retired thread is never given a task it could not finish.
 */
export class ThreadRecycler {
  private readonly assigned = new Map<number, number>();
  private readonly shares = new Map<number, number>();
  /** Due threads, in the order they came due, with the cause. */
  private readonly due = new Map<number, RecycleCause>();
  /** Get nothing more; stay here until their thread is gone. */
  private readonly retiring = new Set<number>();
  private readonly terminated = new Set<number>();
  private readonly workers = new Map<number, PiscinaWorker>();
  /** Threads that came up after the first ones and have taken nothing yet. */
  private readonly fresh = new Set<number>();
  private sparePending = false;
  private counting = false;
  private readonly random: () => number;

  constructor(private readonly options: RecyclerOptions) {
    this.random = options.random ?? Math.random;
  }

  /** Piscina's default (one task per thread, first idle one), minus retiring threads; spares go to fresh threads only. */
  readonly balancer: PiscinaLoadBalancer = (task, workers) => {
    const spare = task.name === SPARE_TASK_NAME;
    for (const worker of workers) {
      if (worker.currentUsage !== 0 || worker.terminating || worker.destroyed) continue;
      if (this.retiring.has(worker.id)) continue;
      if (spare && !this.fresh.has(worker.id)) continue;
      this.fresh.delete(worker.id);
      if (!spare) this.countAssignment(worker.id);
      return worker;
    }
    return null;
  };

  /** A thread is up and has loaded its code (Piscina's `workerCreate`). */
  onWorkerCreate(worker: PiscinaWorker): void {
    this.workers.set(worker.id, worker);
    if (!this.counting) return;
    this.fresh.add(worker.id);
    this.sparePending = false;
    this.rebalance();
  }

  /** Forgets threads that are gone; `liveIds` are the thread ids still running. */
  onWorkerDestroy(liveIds: ReadonlySet<number>): void {
    for (const id of this.workers.keys()) {
      if (liveIds.has(id)) continue;
      this.workers.delete(id);
      this.assigned.delete(id);
      this.shares.delete(id);
      this.due.delete(id);
      this.retiring.delete(id);
      this.terminated.delete(id);
      this.fresh.delete(id);
    }
  }

  /** Forgets assignments so far: warm-up tasks are not a thread's share of work. */
  resetCounts(): void {
    this.assigned.clear();
    this.counting = true;
  }

  /** A thread answered a task; its heap in use after it decides whether it is due. */
  afterTask(threadId: number, heapUsedBytes: number): void {
    const { recycleHeapBytes } = this.options;
    if (recycleHeapBytes > 0 && heapUsedBytes > recycleHeapBytes) {
      this.markDue(threadId, 'recycled_memory');
    }
  }

  /** The spare request was given up (it waited too long): a later due thread asks again. */
  spareFailed(): void {
    this.sparePending = false;
    if (this.due.size > 0) this.askForSpare();
  }

  /** Terminates the retiring threads that have finished their last task. */
  retireIdle(): void {
    // Called after every task: Piscina builds its list of threads anew on each read.
    if (this.retiring.size === 0) return;
    const threads = this.options.threads();
    for (const id of this.retiring) {
      if (this.terminated.has(id) || this.workers.get(id)?.currentUsage !== 0) continue;
      const thread = threads.find((candidate) => candidate.threadId === id);
      if (thread === undefined) continue;
      this.terminated.add(id);
      void thread.terminate();
    }
  }

  /**
   * Above its size (a spare came up, or Piscina started an extra thread while
   * one was being replaced), the pool retires due threads first, then, if it
   * is still above, the thread that has been given the fewest tasks (a fresh
   * one: the others' code is warm).
   */
  private rebalance(): void {
    let surplus = this.working().length - this.options.size;
    for (const [id, cause] of this.due) {
      if (surplus <= 0) break;
      this.due.delete(id);
      if (!this.workers.has(id) || this.retiring.has(id)) continue;
      this.retiring.add(id);
      this.options.onRecycled(cause);
      surplus -= 1;
    }
    while (surplus > 0) {
      const idlest = this.working().sort(
        (a, b) => (this.assigned.get(a) ?? 0) - (this.assigned.get(b) ?? 0),
      )[0];
      if (idlest === undefined) break;
      this.retiring.add(idlest);
      surplus -= 1;
    }
    if (this.due.size > 0) this.askForSpare();
    this.retireIdle();
  }

  /** Threads alive and not retiring. */
  private working(): number[] {
    return [...this.workers.keys()].filter((id) => !this.retiring.has(id));
  }

  private markDue(id: number, cause: RecycleCause): void {
    if (!this.workers.has(id) || this.retiring.has(id) || this.due.has(id)) return;
    this.due.set(id, cause);
    this.askForSpare();
  }

  private askForSpare(): void {
    if (this.sparePending) return;
    this.sparePending = true;
    this.options.requestSpare();
  }

  private countAssignment(id: number): void {
    const { maxTasksPerThread } = this.options;
    if (maxTasksPerThread === 0 || !this.counting) return;
    const count = (this.assigned.get(id) ?? 0) + 1;
    this.assigned.set(id, count);
    let share = this.shares.get(id);
    if (share === undefined) {
      share = Math.max(1, Math.round(maxTasksPerThread * (0.8 + 0.4 * this.random())));
      this.shares.set(id, share);
    }
    if (count >= share) this.markDue(id, 'recycled_tasks');
  }
}
