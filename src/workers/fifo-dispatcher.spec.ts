import { Cancellation } from './cancellation';
import { FifoDispatcher } from './fifo-dispatcher';

/** A task whose end the test decides. */
function controllable() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { start: jest.fn(() => done), finish };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe(FifoDispatcher.name, () => {
  it('runs as many tasks as it has slots, and the others in the order they came', async () => {
    const dispatcher = new FifoDispatcher(2);
    const tasks = [0, 1, 2, 3, 4].map(() => controllable());
    const started: number[] = [];
    const runs = tasks.map((task, index) =>
      dispatcher.run(() => {
        started.push(index);
        return task.start();
      }, new Cancellation()),
    );
    expect(started).toEqual([0, 1]);
    expect(dispatcher.queued).toBe(3);

    tasks[1]?.finish();
    await turn();
    expect(started).toEqual([0, 1, 2]);
    tasks[0]?.finish();
    await turn();
    expect(started).toEqual([0, 1, 2, 3]);
    tasks.forEach((task) => task.finish());
    await Promise.all(runs);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(dispatcher.queued).toBe(0);
  });

  it('drops a task cancelled while it waits, without starting it', async () => {
    const dispatcher = new FifoDispatcher(1);
    const running = controllable();
    const cancelled = controllable();
    const next = controllable();
    const first = dispatcher.run(running.start, new Cancellation());
    const signal = new Cancellation();
    const dropped = dispatcher.run(cancelled.start, signal);
    const after = dispatcher.run(next.start, new Cancellation());

    signal.abort('client gone');
    await expect(dropped).rejects.toMatchObject({ name: 'AbortError' });
    expect(dispatcher.queued).toBe(1);
    running.finish();
    next.finish();
    await Promise.all([first, after]);
    expect(cancelled.start).not.toHaveBeenCalled();
    expect(next.start).toHaveBeenCalledTimes(1);
  });

  it('accepts a standard AbortSignal, and refuses at once one that has already fired', async () => {
    const dispatcher = new FifoDispatcher(1);
    const task = controllable();
    await expect(dispatcher.run(task.start, AbortSignal.abort())).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(task.start).not.toHaveBeenCalled();
    expect(dispatcher.queued).toBe(0);
  });

  it('frees the slot of a task that fails, even synchronously', async () => {
    const dispatcher = new FifoDispatcher(1);
    const failing = dispatcher.run(() => {
      throw new Error('boom');
    }, new Cancellation());
    await expect(failing).rejects.toThrow('boom');
    const task = controllable();
    const next = dispatcher.run(task.start, new Cancellation());
    expect(task.start).toHaveBeenCalledTimes(1);
    task.finish();
    await next;
  });
});
