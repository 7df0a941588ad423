import { checkTarget, fmt, markdownTable, percentile, ratio, summarize } from './stats';

describe('bench statistics', () => {
  it('takes nearest-rank percentiles of sorted values', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile(values, 100)).toBe(100);
    expect(percentile(values, 0)).toBe(1);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it('summarizes unsorted latencies without changing them', () => {
    const values = [5, 1, 4, 2, 3];
    expect(summarize(values)).toEqual({ samples: 5, p50: 3, p99: 5, max: 5 });
    expect(values).toEqual([5, 1, 4, 2, 3]);
  });

  it('gives NaN, not 0 or Infinity, for a ratio that cannot be computed', () => {
    expect(ratio(3, 2)).toBe(1.5);
    expect(ratio(3, 0)).toBeNaN();
    expect(ratio(undefined, 2)).toBeNaN();
    expect(ratio(NaN, 2)).toBeNaN();
  });

  it('checks a ratio against its goal in either direction', () => {
    expect(checkTarget('a', 0.96, 'atLeast', 0.95).met).toBe(true);
    expect(checkTarget('a', 0.94, 'atLeast', 0.95).met).toBe(false);
    expect(checkTarget('b', 2, 'atMost', 2).met).toBe(true);
    expect(checkTarget('b', 2.1, 'atMost', 2).met).toBe(false);
    expect(checkTarget('c', NaN, 'atMost', 2).met).toBeUndefined();
  });

  it('formats numbers for a table and marks unknown ones', () => {
    expect(fmt(12345.678)).toBe('12,346');
    expect(fmt(1.234, 2)).toBe('1.23');
    expect(fmt(undefined)).toBe('–');
    expect(fmt(NaN, 1)).toBe('–');
  });

  it('renders a markdown table and escapes pipes in cells', () => {
    expect(markdownTable(['a', 'b'], [['1', 'x|y']])).toBe(
      ['| a | b |', '| --- | --- |', '| 1 | x\\|y |'].join('\n'),
    );
  });
});
