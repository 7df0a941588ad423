import { Controller, Get, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { PrometheusController } from '@willsoto/nestjs-prometheus';
import type { FastifyReply } from 'fastify';
import { register } from 'prom-client';
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
  // Scrapes come every few seconds, from Prometheus: no access-log line each. On
  // ADMIN_PORT when one is set.
  @HttpBehaviour({ accessLog: false, admin: true })
  @ApiOperation({ summary: 'Prometheus metrics of every cluster process, aggregated' })
  override async index(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const text = await this.cluster.scrape();
    void reply.header('content-type', register.contentType);
    return text;
  }
}
