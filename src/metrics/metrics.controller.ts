import { Controller, Get, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { PrometheusController } from '@willsoto/nestjs-prometheus';
import type { FastifyReply } from 'fastify';
import { register } from 'prom-client';
import { Scope } from '../auth/scopes';
import { HttpBehaviour } from '../http/route-behaviour';
import { ClusterScrapeService } from './cluster-scrape.service';

/** `GET /metrics`: the whole cluster in one scrape. */
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
  override async index(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const text = await this.cluster.scrape();
    void reply.header('content-type', register.contentType);
    return text;
  }
}
