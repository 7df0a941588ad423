import { ErrorCode } from '../common/error-codes';
import { inputSchema, integer } from '@corepool/core';
import { defineTask, type BinaryTaskOptions } from '@corepool/core';
import { fixedBodyLimit, rawBodyLimit } from './body-limit';

interface Options {
  level: number;
}

const taskWith = (binary: Partial<BinaryTaskOptions<Options>>) =>
  defineTask<Options, number>({
    name: 'capped',
    description: 'A binary task whose level caps its body.',
    input: inputSchema<Options>('CappedInput', { level: integer({ minimum: 1, maximum: 9 }) }),
    binary: { contentTypes: ['application/octet-stream'], ...binary },
    limits: {},
    run: () => 0,
  });

// Level 9 takes at most 100 bytes, level 5 at most 10,000; other levels set no cap.
const capped = taskWith({
  bodyCapFor: ({ level }) =>
    level === 9 || level === 5
      ? {
          maxBytes: level === 9 ? 100 : 10_000,
          explain: (bodyBytes) => `level ${level} takes at most so much (body: ${bodyBytes})`,
        }
      : undefined,
});

describe(rawBodyLimit.name, () => {
  it('is the cap the options set when it is the tightest, and its refusal says why', () => {
    const limit = rawBodyLimit(capped, { level: 9 }, 1_000);
    const refusal = limit.refusal(150);

    expect(limit.bytes).toBe(100);
    expect(refusal).toMatchObject({
      code: ErrorCode.PAYLOAD_TOO_LARGE,
      detail: 'level 9 takes at most so much (body: 150)',
      facts: { limit: 100 },
    });
    expect(limit.refusal().detail).toBe('level 9 takes at most so much (body: undefined)');
  });

  it('is the outer limit when the options set a looser cap or none', () => {
    for (const level of [5, 1]) {
      const limit = rawBodyLimit(capped, { level }, 1_000);

      expect(limit.bytes).toBe(1_000);
      expect(limit.refusal(2_000)).toMatchObject({
        code: ErrorCode.PAYLOAD_TOO_LARGE,
        detail: 'The body is larger than the limit of 1000 bytes',
        facts: { limit: 1_000 },
      });
    }
  });

  it("is the task's own fixed limit when it is tighter than the outer one", () => {
    const fixed = taskWith({ maxBodyBytes: 50 });

    expect(rawBodyLimit(fixed, { level: 9 }, 1_000).bytes).toBe(50);
    expect(rawBodyLimit(fixed, { level: 9 }, 20).bytes).toBe(20);
  });
});

describe(fixedBodyLimit.name, () => {
  it('refuses with the limit in bytes', () => {
    expect(fixedBodyLimit(64).refusal(65)).toMatchObject({
      code: ErrorCode.PAYLOAD_TOO_LARGE,
      facts: { limit: 64 },
    });
  });
});
