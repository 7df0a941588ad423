import { EventEmitter } from 'node:events';

/**
 * Waiting, with a time limit, until a count of things in flight (requests,
 * tasks) reaches zero. The owner of the count calls `idle()` when it does.
 */
export class IdleWaiter {
  private readonly events = new EventEmitter();

  constructor() {
    // Any number of waiters (shutdown, tests) may wait at once.
    this.events.setMaxListeners(0);
  }

  /** The count reached zero: every waiter resolves true. */
  idle(): void {
    this.events.emit('idle');
  }

  /** Resolves true at once when `idleNow`, else at the next `idle()`, or false after `timeoutMs`. */
  wait(idleNow: boolean, timeoutMs: number): Promise<boolean> {
    if (idleNow) return Promise.resolve(true);
    return new Promise<boolean>((done) => {
      const timer = setTimeout(
        () => {
          this.events.off('idle', onIdle);
          done(false);
        },
        Math.max(0, timeoutMs),
      );
      const onIdle = () => {
        clearTimeout(timer);
        done(true);
      };
      this.events.once('idle', onIdle);
    });
  }
}
