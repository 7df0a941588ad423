import type { TaskDefinition } from './task-definition';
import { builtInTasks } from './index';

/**
 * The tasks this process knows, by name: the built-in ones plus those of any
 * extra modules (`TASK_MODULES`). Loaded the same way on the main thread (for
 * the catalog and validation) and in every worker thread (to run them), so the
 * two sides cannot disagree.
 */
export class TaskRegistry {
  private readonly byName: ReadonlyMap<string, TaskDefinition>;

  constructor(tasks: readonly TaskDefinition[]) {
    const byName = new Map<string, TaskDefinition>();
    for (const task of tasks) {
      if (!/^[a-z0-9][a-z0-9-]*$/.test(task.name)) {
        throw new Error(`Task name '${task.name}' must be lower-case letters, digits and dashes`);
      }
      if (byName.has(task.name)) throw new Error(`Two tasks are named '${task.name}'`);
      byName.set(task.name, task);
    }
    this.byName = byName;
  }

  /** Built-in tasks plus the tasks exported by each module path (absolute). */
  static load(extraModules: readonly string[] = []): TaskRegistry {
    return new TaskRegistry([...builtInTasks, ...extraModules.flatMap(loadTaskModule)]);
  }

  get(name: string): TaskDefinition | undefined {
    return this.byName.get(name);
  }

  list(): TaskDefinition[] {
    return [...this.byName.values()];
  }
}

/** A task module exports a TaskDefinition or an array of them, as `default` or `tasks`. */
function loadTaskModule(path: string): TaskDefinition[] {
  // Synchronous on purpose: a thread must know its tasks before it reports ready.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const exported = require(path) as { default?: unknown; tasks?: unknown };
  const found = exported.tasks ?? exported.default ?? exported;
  const tasks = Array.isArray(found) ? found : [found];
  for (const task of tasks) {
    if (!isTaskDefinition(task)) throw new Error(`${path} does not export task definitions`);
  }
  return tasks as TaskDefinition[];
}

function isTaskDefinition(value: unknown): value is TaskDefinition {
  const task = value as Partial<TaskDefinition> | null;
  return (
    typeof task?.name === 'string' &&
    typeof task.run === 'function' &&
    typeof task.input === 'object' &&
    task.input !== null &&
    typeof task.description === 'string'
  );
}
