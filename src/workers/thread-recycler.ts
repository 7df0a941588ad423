import type { Worker } from 'node:worker_threads';
import type { Piscina } from 'piscina';

// Piscina exports these types only from an internal path; derive them from its public options.
type PiscinaLoadBalancer = NonNullable<
  NonNullable<ConstructorParameters<typeof Piscina>[0]>['loadBalancer']
>;
type PiscinaWorker = Parameters<PiscinaLoadBalancer>[1][number];

/**
 * `WORKER_MAX_TASKS`: retire a thread after it has been given that many tasks
 * (the `max_requests` of Octane and Swoole), so slow leaks in task code never
 * grow without bound.
 *
 * Piscina has no such option, but it lets us choose which thread gets each
 * task. Counting at that moment, not when a result arrives, is what makes this
 * safe: a thread that has had its share is never given another task, so when
 * its last one finishes it is idle and can be terminated without failing
 * anything. Piscina then starts a replacement, which only receives tasks once
 * it has loaded the task code.
 */
export class ThreadRecycler {
  private readonly assigned = new Map<number, number>();
  /** Given their share; stay here until their thread is gone, so they get nothing more. */
  private readonly retiring = new Set<number>();
  private readonly terminated = new Set<number>();
  private readonly workers = new Map<number, PiscinaWorker>();
  private recycledCount = 0;
  /** Threads that came up after the first ones, for whatever reason. */
  private replacements = 0;
  private counting = false;

  constructor(private readonly maxTasksPerThread: number) {}

  /** Same policy as Piscina's default (one task per thread), minus retiring threads. */
  readonly balancer: PiscinaLoadBalancer = (_task, workers) => {
    for (const worker of workers) {
      if (worker.currentUsage !== 0 || worker.terminating || worker.destroyed) continue;
      if (this.retiring.has(worker.id)) continue;
      this.countAssignment(worker.id);
      return worker;
    }
    return null;
  };

  /** Threads retired after their share of tasks. */
  get recycled(): number {
    return this.recycledCount;
  }

  /**
   * Threads that died otherwise (crash, heap, aborted task) and were replaced,
   * counted when the replacement is ready. (A thread's id is gone once it has
   * exited, so deaths are counted through their replacements.)
   */
  get restarts(): number {
    return Math.max(0, this.replacements - this.recycledCount);
  }

  onWorkerCreate(worker: PiscinaWorker): void {
    this.workers.set(worker.id, worker);
    if (this.counting) this.replacements += 1;
  }

  /** Forgets threads that are gone; `liveIds` are the thread ids still running. */
  onWorkerDestroy(liveIds: ReadonlySet<number>): void {
    for (const id of this.workers.keys()) {
      if (liveIds.has(id)) continue;
      this.workers.delete(id);
      this.assigned.delete(id);
      this.retiring.delete(id);
      this.terminated.delete(id);
    }
  }

  /** Forgets assignments so far: warm-up tasks are not a thread's share of work. */
  resetCounts(): void {
    this.assigned.clear();
    this.counting = true;
  }

  /** Terminates the retiring threads that have finished their last task. */
  retireIdle(threads: readonly Worker[]): void {
    for (const id of this.retiring) {
      if (this.terminated.has(id) || this.workers.get(id)?.currentUsage !== 0) continue;
      const thread = threads.find((candidate) => candidate.threadId === id);
      if (thread === undefined) continue;
      this.terminated.add(id);
      this.recycledCount += 1;
      void thread.terminate();
    }
  }

  private countAssignment(id: number): void {
    if (this.maxTasksPerThread === 0) return;
    const count = (this.assigned.get(id) ?? 0) + 1;
    this.assigned.set(id, count);
    if (count >= this.maxTasksPerThread) this.retiring.add(id);
  }
}
