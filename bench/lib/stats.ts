/**
 * Pure helpers of the benchmark: percentiles, ratios and markdown tables.
 * Nothing here measures anything, so it can be unit-tested.
 */

export interface LatencySummary {
  readonly samples: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/** Nearest-rank percentile (p in 0..100) of ascending values; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? NaN;
}

/** p50, p99 and max of some latencies, in whatever unit they were given. */
export function summarize(values: readonly number[]): LatencySummary {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    samples: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? NaN,
  };
}

export function median(values: readonly number[]): number {
  return summarize(values).p50;
}

/** a / b, or NaN when either is missing or b is zero: a ratio that cannot be computed is not 0. */
export function ratio(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) {
    return NaN;
  }
  return a / b;
}

/** A number for a table: fixed digits, thousands separated, `–` when unknown. */
export function fmt(value: number | undefined, digits = 0): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  return value.toLocaleString('en-US', {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

/** A GitHub-flavoured markdown table; `|` inside cells is escaped. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]) {
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export type Comparison = 'atLeast' | 'atMost';

export interface TargetResult {
  readonly name: string;
  readonly measured: number;
  readonly goal: number;
  readonly comparison: Comparison;
  /** Undefined when the ratio could not be measured. */
  readonly met: boolean | undefined;
}

/** Checks one measured ratio against its goal. */
export function checkTarget(
  name: string,
  measured: number,
  comparison: Comparison,
  goal: number,
): TargetResult {
  const met = Number.isFinite(measured)
    ? comparison === 'atLeast'
      ? measured >= goal
      : measured <= goal
    : undefined;
  return { name, measured, goal, comparison, met };
}
