import type { TraceExemplar } from './exposition';
import { LabelledMetric, type Labels, type Sample } from './labelled-metric';

/** One histogram series: a count per bucket (the last one is `+Inf`), their sum and their number. */
export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  /**
   * The last traced observation of each bucket, made at the first one: a
   * series that no sampled request ever reached carries none
   * (docs/observability.md#exemplars).
   */
  exemplars: (TraceExemplar | undefined)[] | undefined;

  constructor(
    readonly labels: Labels,
    /** Upper bounds, ascending. */
    private readonly buckets: readonly number[],
  ) {
    this.counts = new Float64Array(buckets.length + 1);
  }

  observe(value: number): number {
    const { buckets } = this;
    let bucket = 0;
    while (bucket < buckets.length && value > buckets[bucket]!) bucket++;
    this.counts[bucket]! += 1;
    this.sum += value;
    this.count += 1;
    return bucket;
  }

  /** An observation of a sampled request's: its bucket keeps the trace as its exemplar. */
  observeTraced(value: number, traceId: string, spanId: string): void {
    const bucket = this.observe(value);
    this.exemplars ??= new Array<TraceExemplar | undefined>(this.counts.length);
    this.exemplars[bucket] = {
      labelSet: { trace_id: traceId, span_id: spanId },
      value,
      timestamp: Date.now() / 1000,
    };
  }
}

/** A histogram, exposed as prom-client's (`_bucket` with `le`, `_sum`, `_count`; exemplars on the buckets). */
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
    const { exemplars } = series;
    let cumulative = 0;
    this.buckets.forEach((le, index) => {
      cumulative += series.counts[index]!;
      const sample: Sample = {
        labels: { le, ...series.labels },
        value: cumulative,
        metricName: bucketName,
      };
      values.push(withExemplar(sample, exemplars?.[index]));
    });
    values.push(
      withExemplar(
        { labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: bucketName },
        exemplars?.[this.buckets.length],
      ),
      { labels: { ...series.labels }, value: series.sum, metricName: `${this.name}_sum` },
      { labels: { ...series.labels }, value: series.count, metricName: `${this.name}_count` },
    );
  }

  protected clear(series: HistogramSeries): void {
    series.counts.fill(0);
    series.sum = 0;
    series.count = 0;
    series.exemplars = undefined;
  }
}

/** prom-client's registry writes a value's `exemplar` after it in the OpenMetrics format. */
const withExemplar = (sample: Sample, exemplar: TraceExemplar | undefined): Sample =>
  exemplar === undefined ? sample : Object.assign(sample, { exemplar });
