/**
 * `--variant=NAME=VALUE,…` arguments: each one more run of this build with
 * those settings, measured beside the others (e.g. tracing off, at 1 % and at
 * 100 % in one run). Their keys: `variant`, then `variant2`, `variant3`…
 * (the first keeps the name earlier notes used).
 */
export interface Variant {
  readonly key: string;
  readonly env: Readonly<Record<string, string>>;
}

export function variantsOf(argv: readonly string[]): Variant[] {
  return argv
    .filter((arg) => arg.startsWith('--variant='))
    .map((arg, index) => ({
      key: index === 0 ? 'variant' : `variant${index + 1}`,
      env: Object.fromEntries(
        arg
          .slice('--variant='.length)
          .split(',')
          // The value may hold `=` itself (NODE_OPTIONS=--max-semi-space-size=2).
          .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
      ),
    }));
}
