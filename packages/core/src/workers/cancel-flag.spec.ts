import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { TaskCancelledError } from '../tasks/task-context';
import {
  CancelFlagPool,
  FlagTaskContext,
  isCancelled,
  requestCancel,
  runningOn,
} from './cancel-flag';

describe(CancelFlagPool.name, () => {
  it('hands out distinct flags, and takes them back cleared', () => {
    const pool = new CancelFlagPool();
    const [a, b] = [pool.acquire(), pool.acquire()];
    requestCancel(a);
    expect([isCancelled(a), isCancelled(b)]).toEqual([true, false]);
    pool.release(a);
    const again = pool.acquire();
    expect(again).toBe(a);
    expect([isCancelled(again), runningOn(again)]).toEqual([false, 0]);
  });

  it('shares a flag with another thread: the thread sees the cancel, the main thread its id', async () => {
    const flag = new CancelFlagPool().acquire();
    const thread = new Worker(
      `const { workerData, parentPort, threadId } = require('node:worker_threads');
       Atomics.store(workerData, 1, threadId);
       parentPort.postMessage('started');
       while (Atomics.load(workerData, 0) === 0) Atomics.wait(workerData, 0, 0, 5);
       parentPort.postMessage('stopped');`,
      { eval: true, workerData: flag },
    );
    // The thread writes its id when it starts, then says so (threads start slowly on a busy machine).
    await expect(once(thread, 'message')).resolves.toEqual(['started']);
    expect(runningOn(flag)).toBe(thread.threadId);
    const stopped = once(thread, 'message');
    requestCancel(flag);
    await expect(stopped).resolves.toEqual(['stopped']);
    await thread.terminate();
  });
});

/** `Atomics.waitAsync` (ES2024; the project's lib is ES2023). */
interface AsyncAtomics {
  waitAsync(array: Int32Array, index: number, value: number): { value: Promise<string> };
}

describe(FlagTaskContext.name, () => {
  it('throws once cancelled, and aborts its signal', async () => {
    const flag = new CancelFlagPool().acquire();
    const context = new FlagTaskContext(flag, 7);
    expect(runningOn(flag)).toBe(7);
    expect(() => context.throwIfCancelled()).not.toThrow();
    const aborted = once(context.signal, 'abort');
    requestCancel(flag);
    await aborted;
    expect(context.signal.reason).toBeInstanceOf(TaskCancelledError);
    expect(() => context.throwIfCancelled()).toThrow(TaskCancelledError);
  });

  it('gives a signal already aborted to a task cancelled before it asked for one', () => {
    const flag = new CancelFlagPool().acquire();
    const context = new FlagTaskContext(flag, 7);
    requestCancel(flag);
    expect(context.signal.aborted).toBe(true);
    expect(context.signal.reason).toBeInstanceOf(TaskCancelledError);
  });

  it('releases its signal when the task ends, without aborting it', async () => {
    const flag = new CancelFlagPool().acquire();
    const context = new FlagTaskContext(flag, 7);
    const { signal } = context;
    // A second waiter on the cancel slot (0, as in the thread above), woken after the
    // context's own: once it wakes, the context has seen its wake-up and stopped waiting.
    const after = (Atomics as unknown as AsyncAtomics).waitAsync(flag, 0, 0);
    context.finish();
    await expect(after.value).resolves.toBe('ok');
    expect(signal.aborted).toBe(false);
  });
});
