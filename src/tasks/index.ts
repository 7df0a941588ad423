import type { TaskDefinition } from '@corepool/core/task';
import { compressTask } from './compress.task';
import { computeTask } from './compute.task';
import { factorialTask } from './factorial.task';
import { hashTask } from './hash.task';
import { jsonStatsTask } from './json-stats.task';
import { matrixMultiplyTask } from './matrix-multiply.task';
import { pdfExtractTask } from './pdf-extract.task';

export {
  compressTask,
  computeTask,
  factorialTask,
  hashTask,
  jsonStatsTask,
  matrixMultiplyTask,
  pdfExtractTask,
};

/**
 * Every task the service offers, in catalog order.
 *
 * To add a task: write `<name>.task.ts` beside this file exporting a `defineTask({...})`
 * (nothing from `@nestjs/*`: worker threads load it), with bounded `limits`, and list it here.
 * That one line is the whole registration: the catalog, validation and the worker threads all
 * read this array.
 */
export const builtInTasks: readonly TaskDefinition[] = [
  computeTask,
  factorialTask,
  matrixMultiplyTask,
  hashTask,
  compressTask,
  jsonStatsTask,
  pdfExtractTask,
];
