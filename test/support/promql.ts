/** Comparison operators of PromQL, longest first. */
const COMPARISONS = ['==', '!=', '>=', '<=', '>', '<'];

/**
 * Adds `bool` to every comparison outside label matchers and strings:
 * `rate(x[5m]) > 0.05` becomes `rate(x[5m]) > bool 0.05`. An alert rule's
 * expression returns nothing while the alert is quiet; with `bool` it returns
 * 0 or 1 for every series it compares, so "no data" then means a wrong metric
 * or label name, never a healthy service.
 */
export function withBoolComparisons(expr: string): string {
  let out = '';
  let braces = 0;
  let quote: string | undefined;
  for (let i = 0; i < expr.length; i++) {
    const char = expr[i]!;
    if (quote !== undefined) {
      out += char;
      if (char === '\\') out += expr[++i] ?? '';
      else if (char === quote) quote = undefined;
      continue;
    }
    if (char === '"' || char === "'" || char === '`') quote = char;
    else if (char === '{') braces++;
    else if (char === '}') braces--;
    const op =
      braces === 0 && quote === undefined
        ? COMPARISONS.find((candidate) => expr.startsWith(candidate, i))
        : undefined;
    if (op !== undefined) {
      out += `${op} bool`;
      i += op.length - 1;
    } else {
      out += char;
    }
  }
  return out;
}
