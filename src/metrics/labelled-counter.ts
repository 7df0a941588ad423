import { LabelledMetric, type Labels, type Sample } from './labelled-metric';

/** One counter series. */
export class CounterSeries {
  value = 0;

  constructor(readonly labels: Labels) {}

  inc(by = 1): void {
    this.value += by;
  }
}

/** A counter, exposed as prom-client's. A series exists, at 0, from its first `series()` call. */
export class LabelledCounter<L extends string> extends LabelledMetric<L, CounterSeries> {
  readonly type = 'counter';

  protected create(labels: Labels): CounterSeries {
    return new CounterSeries(labels);
  }

  protected export(series: CounterSeries, values: Sample[]): void {
    values.push({ labels: { ...series.labels }, value: series.value });
  }

  protected clear(series: CounterSeries): void {
    series.value = 0;
  }
}
