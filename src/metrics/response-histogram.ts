import { LabelledHistogram, type HistogramSeries } from './labelled-histogram';

/**
 * The histogram of HTTP response times, observed once per response. A
 * response's series is three Map lookups away (method, route template,
 * status): no label object is built, no string key (ADR 0025).
 */
export class ResponseHistogram extends LabelledHistogram<'method' | 'route' | 'status_code'> {
  private readonly byMethod = new Map<string, Map<string, Map<number, HistogramSeries>>>();

  constructor(name: string, help: string, buckets: readonly number[]) {
    super(name, help, ['method', 'route', 'status_code'], buckets);
  }

  observe(method: string, route: string, statusCode: number, seconds: number): void {
    this.seriesOf(method, route, statusCode).observe(seconds);
  }

  /** A sampled request's response: its bucket keeps the trace as its exemplar. */
  observeTraced(
    method: string,
    route: string,
    statusCode: number,
    seconds: number,
    traceId: string,
    spanId: string,
  ): void {
    this.seriesOf(method, route, statusCode).observeTraced(seconds, traceId, spanId);
  }

  private seriesOf(method: string, route: string, statusCode: number): HistogramSeries {
    let byRoute = this.byMethod.get(method);
    if (byRoute === undefined) {
      byRoute = new Map<string, Map<number, HistogramSeries>>();
      this.byMethod.set(method, byRoute);
    }
    let byStatus = byRoute.get(route);
    if (byStatus === undefined) {
      byStatus = new Map<number, HistogramSeries>();
      byRoute.set(route, byStatus);
    }
    let series = byStatus.get(statusCode);
    if (series === undefined) {
      series = this.series({ method, route, status_code: String(statusCode) });
      byStatus.set(statusCode, series);
    }
    return series;
  }
}
