import { threadId } from 'node:worker_threads';
import { TaskRegistry } from '../tasks/task-registry';
import { Cancellation } from './cancellation';
import { InlineDispatch } from './task-dispatch';
import type { ProgressMessage } from './task-progress';
import { TaskStop } from './task-stop';

const stopFor = (cancellation = new Cancellation<never>()) => new TaskStop(cancellation, 0);

describe(InlineDispatch.name, () => {
  const registry = TaskRegistry.load();

  it('runs a task on the calling thread and answers with its value', async () => {
    const dispatch = new InlineDispatch(registry, () => undefined);
    const response = await dispatch.run({ task: 'factorial', input: { n: 5 } }, stopFor());
    expect(response).toMatchObject({ ok: true, threadId });
    expect(dispatch.queued).toBe(0);
  });

  it('hands the progress of a followed task to postProgress and counts its reports in the answer', async () => {
    const sent: ProgressMessage[] = [];
    const dispatch = new InlineDispatch(registry, (message) => sent.push(message));
    const response = await dispatch.run(
      { task: 'compute', input: { iterations: 10 }, progress: 42 },
      stopFor(),
    );
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every(({ id }) => id === 42)).toBe(true);
    expect(sent.at(-1)?.progress).toMatchObject({ fraction: 1 });
    expect(response).toMatchObject({ ok: true, progressReports: sent.length });
  });

  it('answers a task that throws as a failure, not a rejection', async () => {
    const response = await new InlineDispatch(registry, () => undefined).run(
      { task: 'no-such-task', input: {} },
      stopFor(),
    );
    expect(response).toMatchObject({ ok: false, kind: 'task' });
  });

  it('rejects with an AbortError, without running, when cancelled before its turn', async () => {
    const signal = new Cancellation<'cancelled'>();
    const running = new InlineDispatch(registry, () => undefined).run(
      { task: 'factorial', input: {} },
      new TaskStop(signal, 0),
    );
    signal.abort('cancelled');
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
  });
});
