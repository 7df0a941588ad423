import { TaskRegistry } from '../tasks/task-registry';
import type { TaskDefinition } from '../tasks/task-definition';
import { createTaskRunner } from './task-runner';

type TaskInputErrorModule = typeof import('../tasks/task-input-error');

/**
 * A second copy of the TaskInputError module, as a TASK_MODULES file that
 * imports it from dist/ gets beside the threads' bundle (ADR 0019).
 */
function otherCopyOfTaskInputError(): TaskInputErrorModule['TaskInputError'] {
  let loaded: TaskInputErrorModule | undefined;
  jest.isolateModules(() => {
    loaded = jest.requireActual<TaskInputErrorModule>('../tasks/task-input-error');
  });
  if (loaded === undefined) throw new Error('not loaded');
  return loaded.TaskInputError;
}

function throwing(error: Error): TaskDefinition {
  return {
    name: 'throws',
    description: 'Throws what it is given.',
    input: { type: 'object', properties: {}, required: [], additionalProperties: false },
    limits: {},
    run: () => {
      throw error;
    },
  } as unknown as TaskDefinition;
}

describe(createTaskRunner.name, () => {
  it("answers a TaskInputError from another copy of its module as the client's mistake", async () => {
    const OtherTaskInputError = otherCopyOfTaskInputError();
    const error = new OtherTaskInputError('not a PDF', 'body', 'INVALID_DOCUMENT');
    const runTask = createTaskRunner(new TaskRegistry([throwing(error)]));
    const response = await runTask({ task: 'throws', input: {} });
    expect(response).toMatchObject({
      ok: false,
      kind: 'input',
      code: 'INVALID_DOCUMENT',
      property: 'body',
    });
  });

  it('still answers any other error as a task failure', async () => {
    const runTask = createTaskRunner(new TaskRegistry([throwing(new Error('broken'))]));
    const response = await runTask({ task: 'throws', input: {} });
    expect(response).toMatchObject({ ok: false, kind: 'task', message: 'broken' });
  });
});
