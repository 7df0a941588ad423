import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { BodyMemoryBudget } from '../http/body-memory-budget';

/**
 * Heap and resident memory of this process, and the request bodies it holds
 * against their budget, for `GET /health`. Reported, not judged: a heap limit
 * is the runtime's and the container's job, the budget refuses bodies itself.
 */
@Injectable()
export class ProcessMemoryHealthIndicator {
  constructor(
    private readonly healthIndicatorService: HealthIndicatorService,
    private readonly bodies: BodyMemoryBudget,
  ) {}

  report<const Key extends string>(key: Key): HealthIndicatorResult<Key> {
    const { heapUsed, heapTotal, rss, external } = process.memoryUsage();
    return this.healthIndicatorService.check(key).up({
      heapUsedBytes: heapUsed,
      heapTotalBytes: heapTotal,
      rssBytes: rss,
      externalBytes: external,
      bodyBytesHeld: this.bodies.bytesHeld,
      bodyBudgetBytes: this.bodies.limitBytes,
    });
  }
}
