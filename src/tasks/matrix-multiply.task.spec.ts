import { validateInput } from '@corepool/core/host';
import {
  matrixMultiplyInput,
  matrixMultiplyTask,
  type MatrixMultiplyInput,
} from './matrix-multiply.task';
import { fieldErrors } from '../../test/support/task-input';
import { liveContext } from '../../test/support/task-context';

const maxDimension = matrixMultiplyTask.limits?.maxDimension as number;
const maxProductEntries = matrixMultiplyTask.limits?.maxProductEntries as number;

function multiply(plain: Partial<MatrixMultiplyInput>) {
  return matrixMultiplyTask.run({ seed: 1, ...plain }, undefined, liveContext());
}

const errorsOf = (plain: object) => fieldErrors(matrixMultiplyInput, plain);

describe(`${matrixMultiplyTask.name} task`, () => {
  describe('run', () => {
    it('multiplies two given 2×2 matrices', async () => {
      const output = await multiply({
        a: [
          [1, 2],
          [3, 4],
        ],
        b: [
          [5, 6],
          [7, 8],
        ],
      });

      expect(output).toEqual({
        rows: 2,
        cols: 2,
        checksum: 134,
        product: [
          [19, 22],
          [43, 50],
        ],
      });
    });

    it('multiplies rectangular matrices (2×3 by 3×1)', async () => {
      const output = await multiply({
        a: [
          [1, 0, -2],
          [0.5, 3, 1],
        ],
        b: [[4], [-1], [2]],
      });

      expect(output).toEqual({ rows: 2, cols: 1, checksum: 0 + 1, product: [[0], [1]] });
    });

    it('returns only the checksum when asked to', async () => {
      const output = await multiply({ a: [[2]], b: [[3]], output: 'checksum' });

      expect(output).toEqual({ rows: 1, cols: 1, checksum: 6 });
    });

    it('returns only the checksum by default when the product is larger than the bound', async () => {
      const side = Math.floor(Math.sqrt(maxProductEntries)) + 1;
      const column = Array.from({ length: side }, () => [1]);
      const row = [Array.from({ length: side }, () => 2)];

      const output = await multiply({ a: column, b: row });

      expect(output).toEqual({ rows: side, cols: side, checksum: 2 * side * side });
    });

    it('generates the same matrices from the same seed, and returns the checksum by default', async () => {
      const first = await multiply({ size: 20, seed: 7 });
      const again = await multiply({ size: 20, seed: 7 });
      const other = await multiply({ size: 20, seed: 8 });

      expect(first).toEqual(again);
      expect(first.product).toBeUndefined();
      expect(other.checksum).not.toBe(first.checksum);
    });

    it('returns a generated product whose checksum is the sum of its entries', async () => {
      const output = await multiply({ size: 3, seed: 42, output: 'product' });

      expect(output.product).toHaveLength(3);
      const entries = output.product!.flat();
      expect(entries).toHaveLength(9);
      expect(output.checksum).toBeCloseTo(
        entries.reduce((sum, value) => sum + value, 0),
        12,
      );
    });

    it('generates entries in [-1, 1)', async () => {
      // A 1×1 product is the product of the two generated entries.
      for (let seed = 0; seed < 50; seed++) {
        const { checksum } = await multiply({ size: 1, seed });
        expect(Math.abs(checksum)).toBeLessThanOrEqual(1);
      }
    });
  });

  describe('input', () => {
    it('accepts two given matrices whose inner dimensions agree', () => {
      expect(errorsOf({ a: [[1, 2, 3]], b: [[1], [2], [3]] })).toEqual({});
    });

    it('accepts a size, with seed defaulting to 1', () => {
      expect(validateInput(matrixMultiplyInput, { size: 4 }).seed).toBe(1);
      expect(errorsOf({ size: maxDimension, seed: 0xffff_ffff })).toEqual({});
    });

    it('requires either a and b, or size', () => {
      expect(Object.keys(errorsOf({}))).toEqual(['a', 'b']);
      expect(Object.keys(errorsOf({ a: [[1]] }))).toEqual(['b']);
    });

    it('rejects size combined with given matrices', () => {
      expect(errorsOf({ a: [[1]], b: [[1]], size: 2 })).toEqual({
        size: ['size cannot be combined with a or b: give either a and b, or size'],
      });
    });

    it.each([
      ['an empty matrix', [], 'a must be a non-empty array of rows'],
      ['an empty row', [[]], 'a row 0 must be a non-empty array of numbers'],
      ['ragged rows', [[1, 2], [3]], 'a must be rectangular: row 1 has 1 entries, row 0 has 2'],
      ['a row that is not an array', [[1], 2], 'a row 1 must be an array of numbers'],
      ['a string entry', [['1']], 'a [0][0] must be a finite number'],
      ['a NaN entry', [[NaN]], 'a [0][0] must be a finite number'],
      ['an infinite entry', [[Infinity]], 'a [0][0] must be a finite number'],
      ['a flat array', [1, 2], 'a row 0 must be a non-empty array of numbers'],
    ])('rejects %s', (_, a, message) => {
      expect(errorsOf({ a, b: [[1]] })).toEqual({ a: [message] });
    });

    it('rejects matrices larger than the dimension bound', () => {
      const tall = Array.from({ length: maxDimension + 1 }, () => [1]);
      const wide = [Array.from({ length: maxDimension + 1 }, () => 1)];

      expect(errorsOf({ a: tall, b: [[1]] })).toEqual({
        a: [`a must have at most ${maxDimension} rows`],
      });
      expect(Object.keys(errorsOf({ a: [[1]], b: wide }))).toEqual(['b']);
    });

    it('rejects inner dimensions that do not agree', () => {
      expect(errorsOf({ a: [[1, 2]], b: [[1, 2]] })).toEqual({
        b: ['b must have as many rows as a has columns (2), got 1'],
      });
    });

    it.each([[0], [maxDimension + 1], [2.5], ['10'], [null]])('rejects size %p', (size) => {
      expect(Object.keys(errorsOf({ size }))).toEqual(['size']);
    });

    it.each([[-1], [2 ** 32], [0.5]])('rejects seed %p', (seed) => {
      expect(Object.keys(errorsOf({ size: 2, seed }))).toEqual(['seed']);
    });

    it('rejects an unknown output', () => {
      expect(Object.keys(errorsOf({ size: 2, output: 'sum' }))).toEqual(['output']);
    });

    it('rejects output product when the product is larger than the bound', () => {
      expect(errorsOf({ size: maxDimension, output: 'product' })).toEqual({
        output: [
          `output 'product' is limited to ${maxProductEntries} entries ` +
            `(this product is ${maxDimension}×${maxDimension}); use 'checksum'`,
        ],
      });
      expect(errorsOf({ size: maxDimension, output: 'checksum' })).toEqual({});
    });

    it('rejects unknown properties', () => {
      expect(Object.keys(errorsOf({ size: 2, transpose: true }))).toEqual(['transpose']);
    });
  });
});
