import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, Histogram } from 'prom-client';
import { problemCodeOf } from '../http/problem-details.filter';
import { routeOf } from '../http/request-context';
import { freshMetric } from './metric-registry';

const HTTP_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

/**
 * Times every HTTP response by method, route template and status, and counts
 * error responses by their problem `code`. Fastify hooks, added before the
 * server starts: Fastify builds each route's hook chain when it becomes ready.
 */
@Injectable()
export class HttpMetricsService implements OnModuleInit {
  private readonly duration = freshMetric(
    'http_request_duration_seconds',
    () =>
      new Histogram({
        name: 'http_request_duration_seconds',
        help: 'HTTP request duration, from arrival to the last byte of the response',
        labelNames: ['method', 'route', 'status_code'],
        buckets: HTTP_BUCKETS,
      }),
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
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    // Synchronous: it runs for every request (see registerRequestContext).
    fastify.addHook('onResponse', (request, reply, done) => {
      this.record(request, reply);
      done();
    });
  }

  private record(request: FastifyRequest, reply: FastifyReply): void {
    const labels = {
      method: request.method,
      // The template (`/api/tasks/:name`), so task names and ids never multiply the series.
      route: routeOf(request),
      status_code: String(reply.statusCode),
    };
    this.duration.observe(labels, reply.elapsedTime / 1000);
    if (reply.statusCode >= 400) {
      this.errors.inc({ ...labels, code: problemCodeOf(reply) ?? 'none' });
    }
  }
}
