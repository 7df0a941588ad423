import type { TaskContext } from '@corepool/core/task';
import { defineTask } from '@corepool/core/task';
import { checkedBy, inputSchema, integer, oneOf, type InputRule } from '@corepool/core/task';
import { mulberry32 } from './seeded-random';

// Every dimension (rows of a, the shared inner dimension, columns of b, or size) is bounded,
// so the work is at most MAX_DIMENSION³ multiply-adds, within the worst case the tasks share
// (ADR 0050 has the times). Given matrices are also bounded by the JSON body limit.
const MAX_DIMENSION = 1_000;
// Returning the product as JSON costs bytes per entry: this keeps the response to megabytes.
const MAX_PRODUCT_ENTRIES = 250_000;
const OUTPUTS = ['product', 'checksum'] as const;

type Matrix = number[][];

/** Input of the `matrix-multiply` task: either `a` and `b`, or `size` (and `seed`). */
export interface MatrixMultiplyInput {
  a?: Matrix;
  b?: Matrix;
  size?: number;
  seed: number;
  output?: (typeof OUTPUTS)[number];
}

const givenMatrices = (input: Readonly<Record<string, unknown>>) => input.size === undefined;
const MATRIX_SCHEMA = {
  type: 'array',
  minItems: 1,
  maxItems: MAX_DIMENSION,
  items: {
    type: 'array',
    minItems: 1,
    maxItems: MAX_DIMENSION,
    items: { type: 'number' },
  },
} as const;

export const matrixMultiplyInput = inputSchema<MatrixMultiplyInput>('MatrixMultiplyInput', {
  a: checkedBy(MATRIX_SCHEMA, isMatrix, {
    description: 'Left matrix, as rows.',
    when: givenMatrices,
    requiredMessage: '$property is required unless size is given',
  }),
  b: checkedBy(MATRIX_SCHEMA, isMatrix, {
    description: 'Right matrix, as rows; it has as many rows as `a` has columns.',
    when: givenMatrices,
    requiredMessage: '$property is required unless size is given',
    rules: [rowsMatchColumnsOfA],
  }),
  size: integer(
    { minimum: 1, maximum: MAX_DIMENSION },
    {
      description: 'Multiplies two generated `size`×`size` matrices instead of given ones.',
      when: (input) => !givenMatrices(input),
      rules: [excludesGivenMatrices],
    },
  ),
  seed: integer(
    { minimum: 0, maximum: 0xffff_ffff },
    {
      default: 1,
      description: 'Seed of the generator used with `size`; the same seed gives the same matrices.',
    },
  ),
  output: oneOf(OUTPUTS, {
    optional: true,
    description:
      '`product` returns every entry; `checksum` only their sum. Default: the product for ' +
      'given matrices when it has at most `maxProductEntries` entries, otherwise the checksum.',
    rules: [productFits],
  }),
});

/** Result of the `matrix-multiply` task. */
export interface MatrixMultiplyOutput {
  rows: number;
  cols: number;
  /** Sum of all entries of the product. */
  checksum: number;
  product?: Matrix;
}

/** Multiplies two given or generated matrices of doubles. */
export const matrixMultiplyTask = defineTask<MatrixMultiplyInput, MatrixMultiplyOutput>({
  name: 'matrix-multiply',
  description:
    'Multiplies matrices a and b, or two seeded random size×size matrices; returns the product or its checksum.',
  input: matrixMultiplyInput,
  size: (input) =>
    input.size !== undefined
      ? input.size ** 3
      : (input.a?.length ?? 0) * (input.b?.length ?? 0) * (input.b?.[0]?.length ?? 0),
  // Returning the product converts and sends every entry: for a thin product that is most of the time.
  costClass: (input) => (returnsProduct(input) ? 'product' : 'checksum'),
  limits: { maxDimension: MAX_DIMENSION, maxProductEntries: MAX_PRODUCT_ENTRIES },
  run(input, _body, context) {
    const { a, b, rows, inner, cols } =
      input.size === undefined
        ? fromGiven(input.a ?? [], input.b ?? [])
        : generate(input.size, input.seed);
    const product = multiply(a, b, rows, inner, cols, context);

    let checksum = 0;
    for (const value of product) checksum += value;

    return returnsProduct(input)
      ? { rows, cols, checksum, product: toRows(product, rows, cols) }
      : { rows, cols, checksum };
  },
});

/** The product itself is returned when asked for, or by default for given matrices whose product is small. */
function returnsProduct(input: MatrixMultiplyInput): boolean {
  if (input.output !== undefined) return input.output === 'product';
  if (input.size !== undefined) return false;
  return (input.a?.length ?? 0) * (input.b?.[0]?.length ?? 0) <= MAX_PRODUCT_ENTRIES;
}

interface Operands {
  a: Float64Array;
  b: Float64Array;
  rows: number;
  inner: number;
  cols: number;
}

// i-k-j order: the innermost loop walks a row of b and a row of the product sequentially,
// instead of striding down a column of b as the textbook i-j-k order does.
function multiply(
  a: Float64Array,
  b: Float64Array,
  rows: number,
  inner: number,
  cols: number,
  context: TaskContext,
): Float64Array {
  const product = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    // Once per row of the product: at most MAX_DIMENSION² multiply-adds between checks.
    context.throwIfCancelled();
    const productRow = product.subarray(i * cols, (i + 1) * cols);
    for (let k = 0; k < inner; k++) {
      const aik = a[i * inner + k]!;
      const bRow = b.subarray(k * cols, (k + 1) * cols);
      for (let j = 0; j < cols; j++) productRow[j] = productRow[j]! + aik * bRow[j]!;
    }
  }
  return product;
}

function fromGiven(a: Matrix, b: Matrix): Operands {
  return {
    a: Float64Array.from(a.flat()),
    b: Float64Array.from(b.flat()),
    rows: a.length,
    inner: b.length,
    cols: b[0]?.length ?? 0,
  };
}

function generate(size: number, seed: number): Operands {
  const next = mulberry32(seed);
  const random = (): Float64Array => {
    const matrix = new Float64Array(size * size);
    for (let i = 0; i < matrix.length; i++) matrix[i] = next() * 2 - 1;
    return matrix;
  };
  const a = random();
  return { a, b: random(), rows: size, inner: size, cols: size };
}

function toRows(values: Float64Array, rows: number, cols: number): Matrix {
  return Array.from({ length: rows }, (_, i) =>
    Array.from(values.subarray(i * cols, (i + 1) * cols)),
  );
}

// Describes what is wrong with a would-be matrix, or returns undefined when it is a non-empty,
// rectangular array of finite numbers within the dimension bound.
function matrixProblem(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length === 0) return 'must be a non-empty array of rows';
  if (value.length > MAX_DIMENSION) return `must have at most ${MAX_DIMENSION} rows`;
  const first: unknown = value[0];
  if (!Array.isArray(first) || first.length === 0)
    return 'row 0 must be a non-empty array of numbers';
  if (first.length > MAX_DIMENSION) return `must have at most ${MAX_DIMENSION} columns`;
  for (let i = 0; i < value.length; i++) {
    const row: unknown = value[i];
    if (!Array.isArray(row)) return `row ${i} must be an array of numbers`;
    if (row.length !== first.length) {
      return `must be rectangular: row ${i} has ${row.length} entries, row 0 has ${first.length}`;
    }
    for (let j = 0; j < row.length; j++) {
      const entry: unknown = row[j];
      if (typeof entry !== 'number' || !Number.isFinite(entry)) {
        return `[${i}][${j}] must be a finite number`;
      }
    }
  }
  return undefined;
}

// The dimensions of the product, when they can be known from the (possibly invalid) input.
function productShape(
  input: Readonly<Record<string, unknown>>,
): { rows: number; cols: number } | undefined {
  if (typeof input.size === 'number') return { rows: input.size, cols: input.size };
  const first: unknown = Array.isArray(input.b) ? input.b[0] : undefined;
  if (!Array.isArray(input.a) || !Array.isArray(first)) return undefined;
  return { rows: input.a.length, cols: first.length };
}

function isMatrix(value: unknown): string | undefined {
  const problem = matrixProblem(value);
  return problem === undefined ? undefined : `$property ${problem}`;
}

// Only a well-formed a has a column count to compare with; isMatrix reports a malformed one.
function rowsMatchColumnsOfA(...[b, input]: Parameters<InputRule>): string | undefined {
  const a = input.a;
  if (!Array.isArray(b) || matrixProblem(a) !== undefined) return undefined;
  const columnsOfA = ((a as Matrix)[0] ?? []).length;
  return b.length === columnsOfA
    ? undefined
    : `$property must have as many rows as a has columns (${columnsOfA}), got ${b.length}`;
}

function excludesGivenMatrices(...[, input]: Parameters<InputRule>): string | undefined {
  return input.a === undefined && input.b === undefined
    ? undefined
    : '$property cannot be combined with a or b: give either a and b, or size';
}

function productFits(...[output, input]: Parameters<InputRule>): string | undefined {
  const shape = productShape(input);
  return output !== 'product' || !shape || shape.rows * shape.cols <= MAX_PRODUCT_ENTRIES
    ? undefined
    : `$property 'product' is limited to ${MAX_PRODUCT_ENTRIES} entries ` +
        `(this product is ${shape.rows}×${shape.cols}); use 'checksum'`;
}
