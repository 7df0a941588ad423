/**
 * `@corepool/core/task`: what a task module imports — the task contract and
 * nothing of the pool, so a thread that loads the module loads no more than
 * it runs. (`@corepool/core` exports the same names, with the pool.)
 *
 * @packageDocumentation
 * @module \@corepool/core/task
 */
export {
  defineTask,
  type BinaryTaskOptions,
  type BodyCap,
  type TaskDefinition,
} from './tasks/task-definition';
export {
  boolean,
  checkedBy,
  defaultsOf,
  inputSchema,
  integer,
  jsonObject,
  oneOf,
  string,
  type InputRule,
  type InputSchema,
  type JsonSchema,
  type PropertyOptions,
  type PropertyRules,
} from './tasks/input-schema';
export {
  TaskCancelledError,
  type SpanAttributes,
  type TaskContext,
  type TaskSpan,
} from './tasks/task-context';
export { TaskInputError, type TaskInputCode } from './tasks/task-input-error';
