import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';

/**
 * Heap and resident memory of this process, for `GET /health`. Reported, not
 * judged: a heap limit is the runtime's and the container's job.
 */
@Injectable()
export class MemoryHealthIndicator {
  constructor(private readonly healthIndicatorService: HealthIndicatorService) {}

  report<const Key extends string>(key: Key): HealthIndicatorResult<Key> {
    const { heapUsed, heapTotal, rss, external } = process.memoryUsage();
    return this.healthIndicatorService.check(key).up({
      heapUsedBytes: heapUsed,
      heapTotalBytes: heapTotal,
      rssBytes: rss,
      externalBytes: external,
    });
  }
}
