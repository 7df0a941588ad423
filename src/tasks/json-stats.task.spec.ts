import { invalidProperties } from '../../test/support/task-input';
import { TaskInputError } from '@corepool/core/task';
import { jsonStatsInput, jsonStatsTask } from './json-stats.task';
import { liveContext } from '../../test/support/task-context';

const maxFields = jsonStatsTask.limits?.maxFields as number;
const maxDepth = jsonStatsTask.limits?.maxDepth as number;
const maxContainers = jsonStatsTask.limits?.maxObjectsAndArrays as number;
const maxDistinct = jsonStatsTask.limits?.maxDistinctStringsAndKeyOrders as number;

function statsOf(json: string) {
  return jsonStatsTask.run({}, bytes(json), liveContext());
}

async function failure(body: Uint8Array | undefined): Promise<unknown> {
  try {
    await jsonStatsTask.run({}, body, liveContext());
  } catch (error) {
    return error;
  }
  throw new Error('expected json-stats to fail');
}

// Copied into a Uint8Array of the test's own realm: jest's TextEncoder returns one of the outer
// realm, which V8 reads far more slowly from code in the test's context.
const bytes = (json: string) => new Uint8Array(new TextEncoder().encode(json));
// A leading byte that JSON.parse rejects at once: the scan before it still counts everything,
// so a body at a bound shows that the bound let it through without paying for the parse.
const scannedOnly = (json: string) => bytes(`x${json}`);

describe(`${jsonStatsTask.name} task`, () => {
  describe('run', () => {
    it('summarises each numeric field: count, min, max, mean and sum', async () => {
      const output = await statsOf(
        JSON.stringify([{ price: 10, qty: 1 }, { price: -2.5 }, { price: 4.5, qty: 3 }]),
      );

      expect(output).toEqual({
        count: 3,
        fields: {
          price: { count: 3, min: -2.5, max: 10, mean: 4, sum: 12 },
          qty: { count: 2, min: 1, max: 3, mean: 2, sum: 4 },
        },
      });
    });

    it('ignores non-numeric values and numbers too large to be finite', async () => {
      const output = await statsOf(
        '[{"a":1,"name":"x","ok":true,"none":null,"nested":{"b":2},"list":[3]},' +
          '{"a":"2","huge":1e400},{"a":3}]',
      );

      expect(output).toEqual({
        count: 3,
        fields: { a: { count: 2, min: 1, max: 3, mean: 2, sum: 4 } },
      });
    });

    it('counts records without numeric fields, and an empty array', async () => {
      expect(await statsOf('[{}, {"name": "x"}]')).toEqual({ count: 2, fields: {} });
      expect(await statsOf('[]')).toEqual({ count: 0, fields: {} });
    });

    it('skips __proto__, constructor and prototype keys without touching any prototype', async () => {
      const output = await statsOf(
        '[{"__proto__": 1, "constructor": 2, "prototype": 3, "x": 4},' +
          ' {"__proto__": {"polluted": 5}, "x": 6}]',
      );

      expect(Object.keys(output.fields)).toEqual(['x']);
      expect(Object.getPrototypeOf(output.fields)).toBe(Object.prototype);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('tracks up to the bound of distinct numeric fields and rejects more', async () => {
      const record = (count: number) =>
        Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}`, i]));

      const atBound = await statsOf(JSON.stringify([record(maxFields), { x: 'text' }]));
      expect(Object.keys(atBound.fields)).toHaveLength(maxFields);

      const error = await failure(bytes(JSON.stringify([{}, record(maxFields + 1)])));
      expect(error).toBeInstanceOf(TaskInputError);
      expect(error).toMatchObject({
        property: 'body[1]',
        message: `body has more than ${maxFields} distinct numeric fields (the first one past the limit is "f${maxFields}")`,
      });
    });

    it('is not confused by quotes, brackets and escapes inside strings', async () => {
      const output = await statsOf(JSON.stringify([{ 'a"{[': 1, b: '}]\\', 'c\\"': 2 }]));

      expect(output).toEqual({
        count: 1,
        fields: {
          'a"{[': { count: 1, min: 1, max: 1, mean: 1, sum: 1 },
          'c\\"': { count: 1, min: 2, max: 2, mean: 2, sum: 2 },
        },
      });
    });

    it('accepts nesting up to the depth bound and rejects deeper nesting before parsing', async () => {
      // The top-level array and the record take two levels.
      const nested = (levels: number) =>
        `[{"a":${'['.repeat(levels - 2)}${']'.repeat(levels - 2)}}]`;

      expect(await statsOf(nested(maxDepth))).toEqual({ count: 1, fields: {} });
      expect(await failure(bytes(nested(maxDepth + 1)))).toMatchObject({
        property: 'body',
        message: `body nests objects and arrays deeper than ${maxDepth} levels`,
      });
    });

    it('rejects more objects and arrays than the bound before parsing', async () => {
      // The top-level array counts too.
      const records = (count: number) => `[${'{},'.repeat(count - 1)}{}]`;

      expect(await failure(scannedOnly(records(maxContainers - 1)))).toMatchObject({
        message: expect.stringMatching(/^body is not valid JSON/),
      });
      expect(await failure(bytes(records(maxContainers)))).toMatchObject({
        property: 'body',
        message: `body has more than ${maxContainers} objects and arrays`,
      });
    });

    it('rejects more distinct strings than the bound, but not repeated ones', async () => {
      const strings = (count: number, distinct: number) =>
        `[{"s":[${Array.from({ length: count }, (_, i) => `"${i % distinct}"`).join(',')}]}]`;

      // "s" is one more distinct string, and its key order one more.
      expect(await failure(scannedOnly(strings(maxDistinct, maxDistinct - 2)))).toMatchObject({
        message: expect.stringMatching(/^body is not valid JSON/),
      });
      expect(await failure(bytes(strings(maxDistinct, maxDistinct - 1)))).toMatchObject({
        property: 'body',
        message: `body has more than ${maxDistinct} distinct strings and object key orders`,
      });
    });

    it('counts each distinct key order, as each costs JSON.parse a hidden class', async () => {
      // Two keys drawn from a small set, in every order: few distinct strings, many orders.
      const keys = Array.from({ length: Math.ceil(Math.sqrt(maxDistinct)) + 1 }, (_, i) => `k${i}`);
      const records = keys.flatMap((first) => keys.map((second) => `{"${first}":0,"${second}":0}`));

      expect(await failure(bytes(`[${records.join(',')}]`))).toMatchObject({
        message: `body has more than ${maxDistinct} distinct strings and object key orders`,
      });
    });

    it('rejects invalid UTF-8', async () => {
      const error = await failure(
        new Uint8Array([0x5b, 0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d, 0x5d]),
      );

      expect(error).toBeInstanceOf(TaskInputError);
      expect(error).toMatchObject({ property: 'body', message: 'body is not valid UTF-8' });
    });

    it.each([['[{"a": 1},'], [''], ['{"a": 1} trailing']])(
      'rejects invalid JSON %p',
      async (json) => {
        const error = await failure(bytes(json));

        expect(error).toBeInstanceOf(TaskInputError);
        expect(error).toMatchObject({ property: 'body' });
        expect((error as Error).message).toMatch(/^body is not valid JSON: /);
      },
    );

    it('rejects a missing body as invalid JSON', async () => {
      expect(await failure(undefined)).toBeInstanceOf(TaskInputError);
    });

    it.each([
      ['{"a": 1}', 'an object'],
      ['42', 'a number'],
      ['null', 'null'],
    ])('rejects the top-level value %s', async (json, what) => {
      expect(await failure(bytes(json))).toMatchObject({
        property: 'body',
        message: `body must be a JSON array of objects, got ${what}`,
      });
    });

    it.each([
      ['[{"a": 1}, 2]', 1, 'a number'],
      ['[{}, {}, {}, [1]]', 3, 'an array'],
      ['[null]', 0, 'null'],
      ['[{}, "x"]', 1, 'a string'],
    ])('rejects %s naming the element that is not an object', async (json, index, what) => {
      const error = await failure(bytes(json));

      expect(error).toBeInstanceOf(TaskInputError);
      expect(error).toMatchObject({
        property: `body[${index}]`,
        message: `body[${index}] must be an object, got ${what}`,
      });
    });
  });

  describe('input', () => {
    it('takes no query parameters', () => {
      expect(invalidProperties(jsonStatsInput, {}, 'query')).toEqual([]);
      expect(invalidProperties(jsonStatsInput, { field: 'x' }, 'query')).toEqual(['field']);
    });
  });
});
