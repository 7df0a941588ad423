import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { JobQueue } from '../jobs/job-queue';

/**
 * Down while the job store cannot serve this process: with SQLite, while the
 * file at `JOBS_SQLITE_PATH` is not the store this process opened, or cannot
 * be read and written (docs/jobs.md). The details say which store and what
 * happened, so that the operator learns it from the probe too.
 */
@Injectable()
export class JobStoreHealthIndicator {
  constructor(
    private readonly healthIndicatorService: HealthIndicatorService,
    private readonly jobs: JobQueue,
  ) {}

  isReady<const Key extends string>(key: Key): HealthIndicatorResult<Key> {
    const indicator = this.healthIndicatorService.check(key);
    const { up, details } = this.jobs.health();
    return up ? indicator.up(details) : indicator.down(details);
  }
}
