import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorCode } from '../common/error-codes';
import { ApiProblems } from '../http/openapi';
import { PrometheusController } from '@willsoto/nestjs-prometheus';
import type { FastifyReply } from 'fastify';
import { Scope } from '../auth/scopes';
import { HttpBehaviour } from '../http/route-behaviour';
import { ClusterScrapeService } from './cluster-scrape.service';
import { CONTENT_TYPES, formatAccepted } from './exposition';

/** `GET /metrics`: the whole cluster in one scrape, in Prometheus's text format or OpenMetrics. */
@ApiTags('metrics')
@Controller('metrics')
export class MetricsController extends PrometheusController {
  constructor(private readonly cluster: ClusterScrapeService) {
    super();
  }

  @Get()
  // Scrapes come every few seconds, from Prometheus: no access-log line each. What the
  // service is doing is for operators: with authentication on, a scrape needs `admin`;
  // with ADMIN_PORT set, it is served there only.
  @HttpBehaviour({ accessLog: false, access: Scope.ADMIN, admin: true })
  @ApiOperation({ summary: 'Prometheus metrics of every cluster process, aggregated' })
  @ApiOkResponse({
    description: "Prometheus's text format, or OpenMetrics when the scraper asks for it",
    content: {
      [CONTENT_TYPES.prometheus]: { schema: { type: 'string' } },
      [CONTENT_TYPES.openmetrics]: { schema: { type: 'string' } },
    },
  })
  @ApiProblems(ErrorCode.METRICS_UNAVAILABLE)
  override async index(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    // OpenMetrics when the scraper asks for it: its histograms carry trace exemplars.
    const format = formatAccepted(reply.request.headers.accept);
    const text = await this.cluster.scrape(format);
    void reply.header('content-type', CONTENT_TYPES[format]);
    return text;
  }
}
