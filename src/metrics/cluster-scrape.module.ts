import { Module } from '@nestjs/common';
import { ClusterScrapeService } from './cluster-scrape.service';

/** Its own module so that PrometheusModule's controller can inject the service. */
@Module({ providers: [ClusterScrapeService], exports: [ClusterScrapeService] })
export class ClusterScrapeModule {}
