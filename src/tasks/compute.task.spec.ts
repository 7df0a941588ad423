import { validateInput } from '@corepool/core/host';
import { computeInput, computeTask } from './compute.task';
import * as shared from '../../test/support/task-input';
import { liveContext, reportingContext } from '../../test/support/task-context';

const maxIterations = computeTask.limits?.maxIterations as number;
const maxPayloadSize = computeTask.limits?.maxPayloadSize as number;

const invalidProperties = (plain: object) => shared.invalidProperties(computeInput, plain);

describe(`${computeTask.name} task`, () => {
  describe('run', () => {
    it('sums sqrt(i)*sin(i) like the tutorial', async () => {
      let expected = 0;
      for (let i = 0; i < 1000; i++) expected += Math.sqrt(i) * Math.sin(i);

      const output = await computeTask.run(
        { iterations: 1000, payloadSize: 0 },
        undefined,
        liveContext(),
      );

      expect(output.computedValue).toBe(expected);
    });

    it('reports the length of the processed payload array', async () => {
      const output = await computeTask.run(
        { iterations: 0, payloadSize: 12_345 },
        undefined,
        liveContext(),
      );

      expect(output).toEqual({ computedValue: 0, processedPayloadLength: 12_345 });
    });

    it('reports its progress, rising to 1', async () => {
      const reports: number[] = [];
      await computeTask.run(
        { iterations: 3_000_000, payloadSize: 10 },
        undefined,
        reportingContext((fraction) => reports.push(fraction)),
      );
      expect(reports.length).toBeGreaterThan(2);
      expect([...reports].sort((a, b) => a - b)).toEqual(reports);
      expect(reports.at(-1)).toBe(1);
    });
  });

  describe('input', () => {
    it('defaults to 10,000,000 iterations and a 100,000-element payload', () => {
      const input = validateInput(computeInput, {});

      expect(input).toMatchObject({ iterations: 10_000_000, payloadSize: 100_000 });
      expect(invalidProperties({})).toEqual([]);
    });

    it('accepts both bounds', () => {
      expect(invalidProperties({ iterations: 0, payloadSize: 0 })).toEqual([]);
      expect(invalidProperties({ iterations: maxIterations, payloadSize: maxPayloadSize })).toEqual(
        [],
      );
    });

    it('rejects values outside the bounds', () => {
      expect(invalidProperties({ iterations: maxIterations + 1 })).toEqual(['iterations']);
      expect(invalidProperties({ iterations: -1 })).toEqual(['iterations']);
      expect(invalidProperties({ payloadSize: maxPayloadSize + 1 })).toEqual(['payloadSize']);
    });

    it.each([['1000'], [1.5], [null], [true]])('rejects %p as a count', (value) => {
      expect(invalidProperties({ iterations: value, payloadSize: value })).toEqual([
        'iterations',
        'payloadSize',
      ]);
    });

    it('rejects unknown properties', () => {
      expect(invalidProperties({ loops: 5 })).toEqual(['loops']);
    });
  });
});
