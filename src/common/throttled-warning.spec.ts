import { ThrottledWarning } from './throttled-warning';

describe(ThrottledWarning.name, () => {
  it('logs the first warning, then at most one per interval', () => {
    const lines: string[] = [];
    let now = 1_000;
    const warning = new ThrottledWarning({ warn: (line) => lines.push(line) }, 10_000, () => now);
    warning.warn('down 1');
    now += 9_999;
    warning.warn('down 2');
    now += 1;
    warning.warn('down 3');
    expect(lines).toEqual(['down 1', 'down 3']);
  });
});
