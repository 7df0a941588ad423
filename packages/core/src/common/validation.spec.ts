import { inputSchema, integer, oneOf, type InputSchema } from '../tasks/input-schema';
import { CorepoolError } from './app-error';
import { MAX_REPORTED_ERRORS, validateInput } from './validation';

const sample = inputSchema<{ count: number; mode: 'a' | 'b'; limit?: number }>('Sample', {
  count: integer({ minimum: 0, maximum: 10 }),
  mode: oneOf(['a', 'b'] as const, { default: 'a' }),
  limit: integer({ minimum: 1, maximum: 5 }, { optional: true }),
});

function refusal(schema: InputSchema, plain: unknown, where: 'body' | 'query' = 'body') {
  try {
    validateInput(schema, plain, where);
  } catch (error) {
    if (error instanceof CorepoolError) return { detail: error.detail, ...error.facts };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe(validateInput.name, () => {
  it('returns the input with defaults applied, and nothing else', () => {
    expect(validateInput(sample, { count: 3 })).toEqual({ count: 3, mode: 'a' });
    expect(validateInput(sample, { count: 3, mode: 'b', limit: null })).toEqual({
      count: 3,
      mode: 'b',
    });
  });

  it("words each field's first problem as class-validator did", () => {
    expect(refusal(sample, { count: 11, mode: 'c', limit: 2.5 }).errors).toEqual([
      { property: 'count', messages: ['count must not be greater than 10'] },
      { property: 'mode', messages: ['mode must be one of the following values: a, b'] },
      { property: 'limit', messages: ['limit must be an integer number'] },
    ]);
    expect(refusal(sample, {}).errors).toEqual([
      { property: 'count', messages: ['count must be an integer number'] },
    ]);
  });

  it('refuses null for a property that has a default but is not optional', () => {
    expect(refusal(sample, { count: 1, mode: null }).errors).toEqual([
      { property: 'mode', messages: ['mode must be a string'] },
    ]);
  });

  it('reports unknown keys, prototype names included, after the declared fields', () => {
    const plain = JSON.parse('{"count":"x","__proto__":1,"toString":2,"constructor":3}');
    expect(refusal(sample, plain).errors?.map((field) => field.property)).toEqual([
      'count',
      '__proto__',
      'toString',
      'constructor',
    ]);
  });

  it('lists at most the first few fields and counts them all', () => {
    const plain = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i]));
    const facts = refusal(sample, { count: 1, ...plain });
    expect(facts.errors).toHaveLength(MAX_REPORTED_ERRORS);
    expect(facts.errorCount).toBe(5_000);
    expect(facts.detail).toBe(`Invalid k0, k1, k2, k3, k4, k5, k6, k7, k8, k9 and 4990 more`);
  });

  it('cuts a long unknown key short', () => {
    const key = 'x'.repeat(10_000);
    const [field] = refusal(sample, { count: 1, [key]: 1 }).errors ?? [];
    expect(field?.property).toBe(`${'x'.repeat(100)}…`);
    expect(field?.messages).toEqual([`property ${'x'.repeat(100)}… should not exist`]);
  });

  it('takes the plain decimal form of integers in a query string, and nothing else', () => {
    expect(validateInput(sample, { count: '7', limit: '2' }, 'query')).toEqual({
      count: 7,
      mode: 'a',
      limit: 2,
    });
    for (const count of ['0x7', '7.0', ' 7', '1e1', '', ['7']]) {
      expect(refusal(sample, { count }, 'query').errors?.[0]?.property).toBe('count');
    }
    // A JSON body keeps its types: a string is not a number there.
    expect(refusal(sample, { count: '7' }).errors?.[0]?.property).toBe('count');
  });

  it('refuses what is not an object', () => {
    for (const plain of [null, 1, 'x', [1], Buffer.from('{}')]) {
      expect(refusal(sample, plain).errors).toEqual([
        { property: 'body', messages: ['body must be an object'] },
      ]);
    }
  });

  it('checks a plain JSON Schema as a task module writes it', () => {
    const plain = {
      type: 'object',
      title: 'Plain',
      properties: { ms: { type: 'integer', minimum: 0, default: 100 } },
      required: [],
      additionalProperties: false,
    } as const;
    const schema = plain as unknown as InputSchema;
    expect(validateInput(schema, {})).toEqual({ ms: 100 });
    expect(validateInput(schema, { ms: null })).toEqual({ ms: 100 });
    expect(refusal(schema, { ms: -1 }).errors).toEqual([
      { property: 'ms', messages: ['ms must not be less than 0'] },
    ]);
  });
});
