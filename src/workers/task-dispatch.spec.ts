import { threadId } from 'node:worker_threads';
import { TaskRegistry } from '../tasks/task-registry';
import { Cancellation } from './cancellation';
import { InlineDispatch } from './task-dispatch';
import { TaskStop } from './task-stop';

const stopFor = (cancellation = new Cancellation<never>()) => new TaskStop(cancellation, 0);

describe(InlineDispatch.name, () => {
  const registry = TaskRegistry.load();

  it('runs a task on the calling thread and answers with its value', async () => {
    const dispatch = new InlineDispatch(registry);
    const response = await dispatch.run({ task: 'factorial', input: { n: 5 } }, stopFor());
    expect(response).toMatchObject({ ok: true, threadId });
    expect(dispatch.queued).toBe(0);
  });

  it('answers a task that throws as a failure, not a rejection', async () => {
    const response = await new InlineDispatch(registry).run(
      { task: 'no-such-task', input: {} },
      stopFor(),
    );
    expect(response).toMatchObject({ ok: false, kind: 'task' });
  });

  it('rejects with an AbortError, without running, when cancelled before its turn', async () => {
    const signal = new Cancellation<'cancelled'>();
    const running = new InlineDispatch(registry).run(
      { task: 'factorial', input: {} },
      new TaskStop(signal, 0),
    );
    signal.abort('cancelled');
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
  });
});
