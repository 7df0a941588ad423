import type { Metric, MetricObjectWithValues, MetricType, MetricValueWithName } from 'prom-client';

export type Labels = Readonly<Record<string, string>>;
export type Sample = MetricValueWithName<string>;

/**
 * A metric whose series are objects its callers keep: an observation is a
 * field update, where prom-client hashes the label object on every call
 * (its cost per histogram observation is in ADR 0025, per task in ADR 0028). For metrics
 * updated on every request or task; the rest stay prom-client's own.
 *
 * prom-client's registry reads it as it reads any metric (`get()`, in its
 * own shape, `reset()`), and the cluster's aggregation sums it.
 */
export abstract class LabelledMetric<L extends string, S extends { readonly labels: Labels }> {
  readonly aggregator = 'sum';
  private readonly all = new Map<string, S>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
  ) {}

  abstract readonly type: 'counter' | 'histogram';

  /** The series of these label values, made at its first use; keep it. */
  series(labels: Readonly<Record<L, string>>): S {
    const key = this.labelNames.map((name) => labels[name]).join('\u0000');
    let series = this.all.get(key);
    if (series === undefined) {
      series = this.create({ ...labels });
      this.all.set(key, series);
    }
    return series;
  }

  // prom-client's registry awaits `get()`; these have nothing to wait for.
  // eslint-disable-next-line @typescript-eslint/require-await
  async get(): Promise<MetricObjectWithValues<Sample>> {
    const values: Sample[] = [];
    for (const series of this.all.values()) this.export(series, values);
    return {
      name: this.name,
      help: this.help,
      type: this.type as unknown as MetricType,
      aggregator: this.aggregator,
      values,
      collect: () => undefined,
    };
  }

  /** Every series back to zero; callers keep the series they hold. */
  reset(): void {
    for (const series of this.all.values()) this.clear(series);
  }

  /** As prom-client's registry takes it: it reads `name`, `get()` and `reset()`. */
  asMetric(): Metric {
    return this as unknown as Metric;
  }

  protected abstract create(labels: Labels): S;
  protected abstract export(series: S, values: Sample[]): void;
  protected abstract clear(series: S): void;
}
