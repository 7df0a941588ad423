import { hasMoreNodesThan } from './json-node-count';

const bytes = (text: string) => Buffer.from(text, 'utf8');
/** The strings, arrays and objects of a parsed JSON value, counted on the value itself. */
function nodesOf(value: unknown): number {
  if (typeof value === 'string') return 1;
  if (Array.isArray(value)) return 1 + value.reduce((sum: number, item) => sum + nodesOf(item), 0);
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).reduce((sum, [, item]) => sum + 1 + nodesOf(item), 1);
  }
  return 0;
}

describe(hasMoreNodesThan.name, () => {
  it('counts strings, keys, arrays and objects at any depth, but not numbers or literals', () => {
    const text = '{"a":1,"b":{"c":[{"d":"x"}, true, null, 2.5]}}';
    expect(nodesOf(JSON.parse(text))).toBe(9);
    expect(hasMoreNodesThan(bytes(text), 9)).toBe(false);
    expect(hasMoreNodesThan(bytes(text), 8)).toBe(true);
    expect(hasMoreNodesThan(bytes('[1, 2.5, -3e4, true, false, null]'), 1)).toBe(false);
  });

  it('counts a string with colons, braces, brackets and escaped quotes once', () => {
    const text = JSON.stringify({ 'a:{[': 'say \\"x:[y]\\" : {z}', f: '\\' });
    expect(nodesOf(JSON.parse(text))).toBe(5);
    expect(hasMoreNodesThan(bytes(text), 5)).toBe(false);
    expect(hasMoreNodesThan(bytes(text), 4)).toBe(true);
  });

  it('agrees with the parsed value on generated documents', () => {
    const value = Object.fromEntries(
      Array.from({ length: 300 }, (_, i) => [`k:${i}"\\{`, [{ [`n${i}`]: `v[${i}` }, i, [[]]]]),
    );
    const text = JSON.stringify(value);
    const count = nodesOf(value);
    expect(hasMoreNodesThan(bytes(text), count)).toBe(false);
    expect(hasMoreNodesThan(bytes(text), count - 1)).toBe(true);
  });
});
