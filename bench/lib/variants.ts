/**
 * `--variant=NAME=VALUE,…` arguments: each one more run of this build with
 * those settings, measured beside the others (e.g. tracing off, at 1 % and at
 * 100 % in one run). Their keys: `variant`, then `variant2`, `variant3`…
 * (the first keeps the name earlier notes used).
 */
export interface Variant {
  readonly key: string;
  readonly env: Readonly<Record<string, string>>;
  /**
   * Request headers the load sends to this configuration, given as `header:NAME=VALUE`
   * (e.g. `header:traceparent=00-…-01`: callers that force sampling).
   */
  readonly headers: Readonly<Record<string, string>>;
}

const HEADER = 'header:';

export function variantsOf(argv: readonly string[]): Variant[] {
  return argv
    .filter((arg) => arg.startsWith('--variant='))
    .map((arg, index) => {
      const pairs = arg
        .slice('--variant='.length)
        .split(',')
        // The value may hold `=` itself (NODE_OPTIONS=--max-semi-space-size=2).
        .map((pair): [string, string] => [
          pair.slice(0, pair.indexOf('=')),
          pair.slice(pair.indexOf('=') + 1),
        ]);
      return {
        key: index === 0 ? 'variant' : `variant${index + 1}`,
        env: Object.fromEntries(pairs.filter(([name]) => !name.startsWith(HEADER))),
        headers: Object.fromEntries(
          pairs
            .filter(([name]) => name.startsWith(HEADER))
            .map(([name, value]) => [name.slice(HEADER.length), value]),
        ),
      };
    });
}
