import { resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TaskDefinition } from './task-definition';

/** A task module: a path (absolute, or relative to the working directory) or a `file:` URL. */
export type TaskModule = string | URL;

/**
 * The tasks a pool knows, by name. Loaded the same way on the calling thread
 * (for validation and a catalog) and in every worker thread (to run them), so
 * the two sides cannot disagree.
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

  /** `preloaded` tasks (a host's own, already imported) plus those each module exports. */
  static load(
    modules: readonly TaskModule[] = [],
    preloaded: readonly TaskDefinition[] = [],
  ): TaskRegistry {
    return new TaskRegistry([...preloaded, ...modules.flatMap(loadTaskModule)]);
  }

  get(name: string): TaskDefinition | undefined {
    return this.byName.get(name);
  }

  list(): TaskDefinition[] {
    return [...this.byName.values()];
  }
}

/** A module's path as `require` takes it: `file:` URLs converted, relative paths from the working directory. */
export function taskModulePath(module: TaskModule): string {
  const text = module.toString();
  if (module instanceof URL || text.startsWith('file:')) return fileURLToPath(module);
  return resolvePath(text);
}

/**
 * A task module exports its tasks as a `tasks` array, as its default export (one task or an
 * array), or as named exports made with `defineTask`; CommonJS or ES module, the output of the
 * app's own TypeScript build included. An ES module is loaded by `require` (Node 22.12 on), so
 * it must not use top-level await.
 */
export function loadTaskModule(module: TaskModule): TaskDefinition[] {
  const path = taskModulePath(module);
  // Synchronous on purpose: a thread must know its tasks before it reports ready.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const exported = require(path) as Record<string, unknown>;
  const tasks = tasksOf(exported);
  if (tasks.length === 0) throw new Error(`${path} exports no task definitions`);
  for (const task of tasks) {
    if (!isTaskDefinition(task)) throw new Error(`${path} exports something that is not a task`);
  }
  return tasks as TaskDefinition[];
}

function tasksOf(exported: Record<string, unknown>): unknown[] {
  const listed = exported.tasks ?? exported.default;
  // A CommonJS `module.exports = task` (or `= [tasks]`) is the module itself.
  if (listed === undefined && (Array.isArray(exported) || isTaskDefinition(exported))) {
    return Array.isArray(exported) ? exported : [exported];
  }
  if (listed !== undefined) {
    // ESM compiled to CommonJS nests a default export's own `tasks` or `default` once more.
    const inner = listed as Record<string, unknown>;
    const unwrapped =
      isTaskDefinition(listed) || Array.isArray(listed)
        ? listed
        : (inner.tasks ?? inner.default ?? listed);
    return Array.isArray(unwrapped) ? unwrapped : [unwrapped];
  }
  return Object.values(exported).filter(isTaskDefinition);
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
