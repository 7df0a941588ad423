import { hasMoreKeysThan } from './json-key-count';

const bytes = (text: string) => Buffer.from(text, 'utf8');

describe(hasMoreKeysThan.name, () => {
  it('counts the keys of objects at any depth', () => {
    const text = '{"a":1,"b":{"c":[{"d":2}]}}';
    expect(hasMoreKeysThan(bytes(text), 4)).toBe(false);
    expect(hasMoreKeysThan(bytes(text), 3)).toBe(true);
  });

  it('does not count colons inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ 'a:b': 'c:d', e: 'say \\"x:y\\" : z', f: '\\' });
    expect(hasMoreKeysThan(bytes(text), 3)).toBe(false);
    expect(hasMoreKeysThan(bytes(text), 2)).toBe(true);
  });

  it('finds no keys in arrays and scalars', () => {
    expect(hasMoreKeysThan(bytes('[[1,2],[3,4],"x:y"]'), 0)).toBe(false);
    expect(hasMoreKeysThan(bytes('12'), 0)).toBe(false);
  });

  it('agrees with JSON.parse on the number of keys of generated objects', () => {
    const keys = Array.from({ length: 500 }, (_, i) => [`k:${i}"\\`, { [`n${i}`]: `v:${i}` }]);
    const text = JSON.stringify(Object.fromEntries(keys));
    expect(hasMoreKeysThan(bytes(text), 1000)).toBe(false);
    expect(hasMoreKeysThan(bytes(text), 999)).toBe(true);
  });
});
