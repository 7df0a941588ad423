import type { TaskDefinition } from '../tasks/task-definition';
import { TaskRegistry } from '../tasks/task-registry';
import { createTaskRunner } from './task-runner';

const PARENT = {
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId: 'b7ad6b7169203331',
  inputSize: 3,
};

function task(run: TaskDefinition['run']): TaskDefinition {
  return {
    name: 'steps',
    description: 'Runs what it is given.',
    input: { type: 'object', properties: {}, required: [], additionalProperties: false },
    limits: {},
    run,
  } as unknown as TaskDefinition;
}

describe('Spans recorded by the task runner (thread-trace.ts)', () => {
  it('records a traced task as a run span under the parent, with the spans and events it added', async () => {
    const runTask = createTaskRunner(
      new TaskRegistry([
        task((_input, _body, context) => {
          context.addEvent('started', { step: 1 });
          const span = context.startSpan('parse', { pages: 2 });
          span.end();
          context.startSpan('left open');
          return 'done';
        }),
      ]),
    );
    const response = await runTask({ task: 'steps', input: {}, trace: PARENT }, 4);
    const [run, parse, leftOpen] = response.spans ?? [];
    expect(run).toMatchObject({
      parentSpanId: PARENT.spanId,
      name: 'run steps',
      status: 'unset',
      attributes: {
        'corepool.task.name': 'steps',
        'corepool.task.input_size': 3,
        'corepool.task.outcome': 'success',
        'corepool.task.batch_size': 4,
        'thread.id': expect.any(Number),
      },
      events: [{ name: 'started', attributes: { step: 1 } }],
    });
    expect(run?.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(parse).toMatchObject({
      name: 'parse',
      parentSpanId: run?.spanId,
      attributes: { pages: 2 },
    });
    // A span the task never ended ends with its task.
    expect(leftOpen?.endMs).toBe(run?.endMs);
  });

  it('ends the run span of a failed task with an error status and type', async () => {
    const runTask = createTaskRunner(
      new TaskRegistry([
        task(() => {
          throw new Error('broken');
        }),
      ]),
    );
    const response = await runTask({ task: 'steps', input: {}, trace: PARENT });
    expect(response.spans?.[0]).toMatchObject({
      status: 'error',
      statusMessage: 'broken',
      attributes: { 'error.type': 'task', 'corepool.task.outcome': 'task' },
    });
  });

  it('records nothing for a request that is not traced, and the context calls do nothing', async () => {
    const runTask = createTaskRunner(
      new TaskRegistry([
        task((_input, _body, context) => {
          context.addEvent('ignored');
          context.startSpan('ignored').end();
          return 'done';
        }),
      ]),
    );
    const response = await runTask({ task: 'steps', input: {} });
    expect(response).toMatchObject({ ok: true, value: 'done' });
    expect(response).not.toHaveProperty('spans');
  });
});
