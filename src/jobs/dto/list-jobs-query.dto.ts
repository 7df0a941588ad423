import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { JOB_STATUSES, type JobStatus } from '../job.types';

/** `GET /api/jobs?status=&limit=&offset=`: most recent activity first, one page at a time. */
export class ListJobsQueryDto {
  @IsOptional()
  @IsIn(JOB_STATUSES)
  status?: JobStatus;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit = 20;

  @Type(() => Number)
  @IsInt()
  @Min(0)
  // BullMQ reads `offset + limit` jobs of each state to cut one page: keep that bounded.
  @Max(10_000)
  offset = 0;
}
