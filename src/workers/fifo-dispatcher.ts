import { onCancel, type CancelSignal } from './cancellation';

/** How a task cancelled while it waits here rejects: the same name as Piscina's abort. */
function abortError(): Error {
  return Object.assign(new Error('The task was cancelled while queued'), { name: 'AbortError' });
}

/** Calls `start`, turning a synchronous throw into a rejection. */
function invoke<T>(start: () => Promise<T>): Promise<T> {
  try {
    return start();
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

/**
 * First come, first served in front of Piscina: a task goes to the pool only
 * when a thread is free; the others wait here in the order they arrived.
 *
 * Piscina's own queue does not keep that order under load. A task it takes
 * from the queue but cannot place goes back to the tail, so every finished
 * task sent one waiting task behind newer ones; with `stricterFIFO` it goes
 * back to the head, but so does every new task that carries an abort signal,
 * and ours all do. Tasks overtook each other, and a task could wait past its
 * deadline while newer ones ran. Here a cancelled task leaves the line at
 * once, and Piscina never holds more tasks than it has threads.
 */
export class FifoDispatcher {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  /** `slots`: how many tasks may run at once (the pool's threads). */
  constructor(private readonly slots: number) {}

  /** Tasks waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Calls `start` when a slot is free and the tasks that came before have
   * started; resolves or rejects as its promise does. If `signal` aborts
   * first, rejects with an AbortError and never calls `start`.
   */
  run<T>(start: () => Promise<T>, signal: CancelSignal): Promise<T> {
    if (signal.aborted) return Promise.reject(abortError());
    if (this.active < this.slots && this.waiting.length === 0) return this.begin(start);
    return new Promise<T>((resolve, reject) => {
      const next = () => {
        stopFollowing();
        this.begin(start).then(resolve, reject);
      };
      const stopFollowing = onCancel(signal, () => {
        const place = this.waiting.indexOf(next);
        if (place !== -1) this.waiting.splice(place, 1);
        reject(abortError());
      });
      this.waiting.push(next);
    });
  }

  private begin<T>(start: () => Promise<T>): Promise<T> {
    this.active += 1;
    return invoke(start).finally(() => {
      // A task only starts in a free slot, so the one freed here is free.
      this.active -= 1;
      this.waiting.shift()?.();
    });
  }
}
