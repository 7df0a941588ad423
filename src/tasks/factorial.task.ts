import type { TaskContext } from '@corepool/core/task';
import { defineTask } from '@corepool/core/task';
import { inputSchema, integer } from '@corepool/core/task';

// The product tree and the decimal conversion (which digitCount needs) of MAX_N! take seconds
// on one core, the same worst case as the other tasks; twice MAX_N, several times that
// (ADR 0050 has the times).
const MAX_N = 1_000_000;
// Keeps the response small; digitCount still reports the full length.
const MAX_DIGITS = 10_000;
// Below this many factors a plain loop beats the recursion overhead.
const LEAF_SIZE = 16;

/** Input of the `factorial` task. */
export interface FactorialInput {
  n: number;
}

export const factorialInput = inputSchema<FactorialInput>('FactorialInput', {
  n: integer({ minimum: 0, maximum: MAX_N }, { description: 'Computes `n!`.' }),
});

/** Result of the `factorial` task. */
export interface FactorialOutput {
  n: number;
  /** Number of decimal digits of `n!`. */
  digitCount: number;
  /** The leading decimal digits of `n!`, at most `maxDigits` of them. */
  digits: string;
  /** True when `digits` holds only the leading part of `n!`. */
  truncated: boolean;
}

// Product of the integers low..high. Splitting the range in halves multiplies numbers of
// similar size, which lets V8's sub-quadratic BigInt multiplication pay off; a naive
// left-to-right loop multiplies a huge number by a small one n times (quadratic overall).
// Cancellation is checked at every leaf: the products above the leaves grow long, but each one
// is a single multiplication that cannot be interrupted anyway.
function productOfRange(low: number, high: number, context: TaskContext): bigint {
  if (high - low < LEAF_SIZE) {
    context.throwIfCancelled();
    let product = 1n;
    for (let i = low; i <= high; i++) product *= BigInt(i);
    return product;
  }
  const middle = Math.floor((low + high) / 2);
  return productOfRange(low, middle, context) * productOfRange(middle + 1, high, context);
}

/** Computes `n!` exactly with BigInt and returns its digit count and leading digits. */
export const factorialTask = defineTask<FactorialInput, FactorialOutput>({
  name: 'factorial',
  description:
    'Computes n! exactly (BigInt, binary splitting); returns its digit count and leading digits.',
  input: factorialInput,
  // Big-integer products grow with the digits: about quadratic in n.
  size: ({ n }) => n * n,
  limits: { maxN: MAX_N, maxDigits: MAX_DIGITS },
  run({ n }, _body, context) {
    const product = n < 2 ? 1n : productOfRange(2, n, context);
    // Converting to decimal is one long call of its own (seconds for the largest n).
    context.throwIfCancelled();
    const decimal = product.toString();
    const truncated = decimal.length > MAX_DIGITS;
    return {
      n,
      digitCount: decimal.length,
      digits: truncated ? decimal.slice(0, MAX_DIGITS) : decimal,
      truncated,
    };
  },
});
