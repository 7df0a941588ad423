import { LabelledMetric, type Labels, type Sample } from './labelled-metric';

/** One histogram series: a count per bucket (the last one is `+Inf`), their sum and their number. */
export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    /** Upper bounds, ascending. */
    private readonly buckets: readonly number[],
  ) {
    this.counts = new Float64Array(buckets.length + 1);
  }

  observe(value: number): void {
    const { buckets } = this;
    let bucket = 0;
    while (bucket < buckets.length && value > buckets[bucket]!) bucket++;
    this.counts[bucket]! += 1;
    this.sum += value;
    this.count += 1;
  }
}

/** A histogram, exposed as prom-client's (`_bucket` with `le`, `_sum`, `_count`). */
export class LabelledHistogram<L extends string = never> extends LabelledMetric<
  L,
  HistogramSeries
> {
  readonly type = 'histogram';

  constructor(
    name: string,
    help: string,
    labelNames: readonly L[],
    /** Upper bounds, ascending. */
    private readonly buckets: readonly number[],
  ) {
    super(name, help, labelNames);
  }

  protected create(labels: Labels): HistogramSeries {
    return new HistogramSeries(labels, this.buckets);
  }

  protected export(series: HistogramSeries, values: Sample[]): void {
    const bucketName = `${this.name}_bucket`;
    let cumulative = 0;
    this.buckets.forEach((le, index) => {
      cumulative += series.counts[index]!;
      values.push({ labels: { le, ...series.labels }, value: cumulative, metricName: bucketName });
    });
    values.push(
      { labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: bucketName },
      { labels: { ...series.labels }, value: series.sum, metricName: `${this.name}_sum` },
      { labels: { ...series.labels }, value: series.count, metricName: `${this.name}_count` },
    );
  }

  protected clear(series: HistogramSeries): void {
    series.counts.fill(0);
    series.sum = 0;
    series.count = 0;
  }
}
