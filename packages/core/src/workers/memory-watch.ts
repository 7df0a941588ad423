import type { Worker } from 'node:worker_threads';
import type { TaskStop } from './task-stop';

/** How often the threads that run a task are measured. */
export const MEMORY_WATCH_INTERVAL_MS = 50;

/**
 * `WORKER_MAX_MEMORY_MB`: the V8 heap cap (`WORKER_MAX_OLD_GENERATION_MB`)
 * does not count buffers and typed arrays, which live outside the heap; a
 * small PDF whose stream inflates took its process to gigabytes of RSS under
 * the heap cap (ADR 0050). So every `MEMORY_WATCH_INTERVAL_MS` the main thread asks each thread that
 * runs a task for its heap statistics (Node answers even while the thread
 * runs synchronous code) and stops a task whose thread holds more than the
 * budget, heap and external memory together, with WORKER_OUT_OF_MEMORY.
 */
export class MemoryWatch {
  private readonly timer: NodeJS.Timeout;
  private sampling = false;

  constructor(
    private readonly budgetBytes: number,
    private readonly running: () => Iterable<TaskStop>,
    private readonly threads: () => readonly Worker[],
  ) {
    this.timer = setInterval(() => void this.sample(), MEMORY_WATCH_INTERVAL_MS).unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async sample(): Promise<void> {
    if (this.sampling) return;
    this.sampling = true;
    try {
      const checks: Promise<void>[] = [];
      for (const stop of this.running()) {
        const id = stop.threadId;
        if (id === 0 || stop.cancellation.aborted) continue;
        const thread = this.threads().find((candidate) => candidate.threadId === id);
        if (thread !== undefined) checks.push(this.check(thread, stop));
      }
      await Promise.all(checks);
    } finally {
      this.sampling = false;
    }
  }

  private async check(thread: Worker, stop: TaskStop): Promise<void> {
    // A thread that exits meanwhile rejects: it has nothing left to measure.
    const heap = await thread.getHeapStatistics().catch(() => undefined);
    if (heap === undefined) return;
    const used = heap.used_heap_size + heap.external_memory;
    // The thread may have moved on to another task by now: stop only the one measured.
    if (used > this.budgetBytes && stop.threadId === thread.threadId) {
      stop.cancellation.abort('memory');
    }
  }
}
