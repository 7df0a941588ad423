import { factorialInput, factorialTask } from './factorial.task';
import * as shared from '../../test/support/task-input';
import { liveContext } from '../../test/support/task-context';

const maxN = factorialTask.limits?.maxN as number;
const maxDigits = factorialTask.limits?.maxDigits as number;

function factorialOf(n: number) {
  return factorialTask.run({ n }, undefined, liveContext());
}

function naiveFactorial(n: number): string {
  let product = 1n;
  for (let i = 2n; i <= BigInt(n); i++) product *= i;
  return product.toString();
}

const invalidProperties = (plain: object) => shared.invalidProperties(factorialInput, plain);

describe(`${factorialTask.name} task`, () => {
  describe('run', () => {
    it('computes 0! and 1! as 1', async () => {
      expect(await factorialOf(0)).toEqual({ n: 0, digitCount: 1, digits: '1', truncated: false });
      expect(await factorialOf(1)).toEqual({ n: 1, digitCount: 1, digits: '1', truncated: false });
    });

    it('computes 20! exactly', async () => {
      expect(await factorialOf(20)).toEqual({
        n: 20,
        digitCount: 19,
        digits: '2432902008176640000',
        truncated: false,
      });
    });

    it('agrees with a naive loop for n = 1000 (1000! has 2568 digits)', async () => {
      const output = await factorialOf(1000);

      expect(output.digits).toBe(naiveFactorial(1000));
      expect(output.digitCount).toBe(2568);
    });

    it('returns only the leading digits when the result is longer than the bound', async () => {
      const full = naiveFactorial(5000);

      const output = await factorialOf(5000);

      expect(full.length).toBeGreaterThan(maxDigits);
      expect(output).toEqual({
        n: 5000,
        digitCount: full.length,
        digits: full.slice(0, maxDigits),
        truncated: true,
      });
    });
  });

  describe('input', () => {
    it('accepts 0 and the bound', () => {
      expect(invalidProperties({ n: 0 })).toEqual([]);
      expect(invalidProperties({ n: maxN })).toEqual([]);
    });

    it('requires n', () => {
      expect(invalidProperties({})).toEqual(['n']);
    });

    it.each([[-1], [maxN + 1], [2.5], ['20'], [null]])('rejects n = %p', (n) => {
      expect(invalidProperties({ n })).toEqual(['n']);
    });
  });
});
