import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { freshMetric, registered } from './metric-registry';
import { ResponseHistogram } from './response-histogram';

const HTTP_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

/** One answered request, as the HTTP edge reports it. */
export interface ResponseSample {
  readonly method: string;
  /** The route template (`/api/tasks/:name`), so task names and ids never multiply the series. */
  readonly route: string;
  readonly statusCode: number;
  readonly seconds: number;
  /** The problem code of an error response, if it was a problem. */
  readonly code: string | undefined;
  /** The request's trace and server span, when tracing is on and it is sampled. */
  readonly trace?: { readonly traceId: string; readonly spanId: string } | undefined;
}

/**
 * Times every HTTP response by method, route template and status, and counts
 * error responses by their problem `code`. The edge's `onResponse` hook
 * (src/http/hooks.ts) reports each response here.
 */
@Injectable()
export class HttpMetricsService {
  private readonly duration = registered(
    new ResponseHistogram(
      'http_request_duration_seconds',
      'HTTP request duration, from arrival to the last byte of the response',
      HTTP_BUCKETS,
    ),
  );
  private readonly errors = freshMetric(
    'http_errors_total',
    () =>
      new Counter({
        name: 'http_errors_total',
        help: 'Error responses (status 400 and above) by route template, status and problem code',
        labelNames: ['method', 'route', 'status_code', 'code'],
      }),
  );
  record(sample: ResponseSample): void {
    const { method, route, statusCode } = sample;
    const { trace } = sample;
    if (trace === undefined) this.duration.observe(method, route, statusCode, sample.seconds);
    else {
      this.duration.observeTraced(
        method,
        route,
        statusCode,
        sample.seconds,
        trace.traceId,
        trace.spanId,
      );
    }
    if (statusCode >= 400) {
      this.errors.inc({
        method,
        route,
        status_code: String(statusCode),
        code: sample.code ?? 'none',
      });
    }
  }
}
