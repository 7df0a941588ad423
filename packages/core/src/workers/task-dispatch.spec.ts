import { threadId } from 'node:worker_threads';
import { inputSchema, integer } from '../tasks/input-schema';
import { defineTask } from '../tasks/task-definition';
import { TaskRegistry } from '../tasks/task-registry';
import { Cancellation } from './cancellation';
import { InlineDispatch } from './task-dispatch';
import type { ProgressMessage } from './task-progress';
import { TaskStop } from './task-stop';

const stopFor = (cancellation = new Cancellation<never>()) => new TaskStop(cancellation, 0);

/** Counts to `n`, reporting its progress at every step. */
const countTask = defineTask({
  name: 'count',
  description: 'Counts to n',
  input: inputSchema<{ n: number }>('CountInput', { n: integer({ minimum: 0, maximum: 100 }) }),
  run: ({ n }, _body, context) => {
    for (let i = 1; i <= n; i++) context.progress(i / n);
    return n;
  },
});

describe(InlineDispatch.name, () => {
  const registry = new TaskRegistry([countTask]);

  it('runs a task on the calling thread and answers with its value', async () => {
    const dispatch = new InlineDispatch(registry, () => undefined);
    const response = await dispatch.run({ task: 'count', input: { n: 5 } }, stopFor());
    expect(response).toMatchObject({ ok: true, threadId });
    expect(dispatch.queued).toBe(0);
  });

  it('hands the progress of a followed task to postProgress and counts its reports in the answer', async () => {
    const sent: ProgressMessage[] = [];
    const dispatch = new InlineDispatch(registry, (message) => sent.push(message));
    const response = await dispatch.run(
      { task: 'count', input: { n: 10 }, progress: 42 },
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
