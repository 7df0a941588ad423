import type { TaskDefinition } from '@corepool/core/task';
import {
  compressTask,
  computeTask,
  factorialTask,
  hashTask,
  jsonStatsTask,
  matrixMultiplyTask,
  pdfExtractTask,
} from './index';

/** The cost class a task declares for an input; '' for a task that declares none. */
const classOf = <Input extends object>(task: TaskDefinition<Input>, input: Input) =>
  task.costClass?.(input, undefined) ?? '';

describe('cost classes of the built-in tasks (what, besides size, drives their cost)', () => {
  it('compress: one class per format and level, 32 in all', () => {
    const classes = new Set<string>();
    for (const format of ['gzip', 'deflate', 'br'] as const) {
      const [min, max] = format === 'br' ? [0, 11] : [1, 9];
      for (let level = min; level <= max; level++) {
        classes.add(classOf(compressTask, { format, level }));
      }
    }
    expect(classes.size).toBe(9 + 9 + 12);
    expect(classOf(compressTask, { format: 'gzip', level: 9 })).not.toBe(
      classOf(compressTask, { format: 'gzip', level: 1 }),
    );
  });

  it('compute: by the payload share of its size, in quarters (five classes)', () => {
    const iterationsOnly = classOf(computeTask, { iterations: 8_000_000, payloadSize: 0 });
    const payloadOnly = classOf(computeTask, { iterations: 0, payloadSize: 4_200_000 });
    expect(iterationsOnly).not.toBe(payloadOnly);
    // The split, not the size, sets the class.
    expect(classOf(computeTask, { iterations: 10, payloadSize: 0 })).toBe(iterationsOnly);
    expect(classOf(computeTask, { iterations: 0, payloadSize: 0 })).toBe(iterationsOnly);
    const classes = new Set<string>();
    for (let share = 0; share <= 100; share++) {
      classes.add(classOf(computeTask, { iterations: 100 - share, payloadSize: share }));
    }
    expect(classes.size).toBe(5);
  });

  it('pdf-extract: by maxPages, in powers of four (seven classes)', () => {
    expect(classOf(pdfExtractTask, { maxPages: 1 })).not.toBe(
      classOf(pdfExtractTask, { maxPages: 2000 }),
    );
    expect(classOf(pdfExtractTask, { maxPages: 3 })).toBe(classOf(pdfExtractTask, { maxPages: 4 }));
    const classes = new Set<string>();
    for (let maxPages = 1; maxPages <= 2000; maxPages++) {
      classes.add(classOf(pdfExtractTask, { maxPages }));
    }
    expect(classes.size).toBe(7);
  });

  it('hash: one class per algorithm', () => {
    expect(classOf(hashTask, { algorithm: 'sha256' })).not.toBe(
      classOf(hashTask, { algorithm: 'sha3-256' }),
    );
  });

  it('matrix-multiply: whether the product itself is returned', () => {
    const thin = { a: [[1], [2]], b: [[3, 4]], seed: 1 };
    expect(classOf(matrixMultiplyTask, thin)).toBe('product');
    expect(classOf(matrixMultiplyTask, { ...thin, output: 'checksum' as const })).toBe('checksum');
    expect(classOf(matrixMultiplyTask, { size: 200, seed: 1 })).toBe('checksum');
  });

  it('factorial and json-stats have no options that change their cost per unit: one class', () => {
    expect(factorialTask.costClass).toBeUndefined();
    expect(jsonStatsTask.costClass).toBeUndefined();
  });
});
