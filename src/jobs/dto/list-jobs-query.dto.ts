import { inputSchema, integer, oneOf } from '../../tasks/input-schema';
import { JOB_STATUSES, type JobStatus } from '../job.types';

/** `GET /api/jobs?status=&limit=&offset=`: most recent activity first, one page at a time. */
export interface ListJobsQuery {
  status?: JobStatus;
  limit: number;
  offset: number;
}

export const listJobsQuery = inputSchema<ListJobsQuery>('ListJobsQuery', {
  status: oneOf(JOB_STATUSES, { optional: true }),
  limit: integer({ minimum: 1, maximum: 100 }, { default: 20 }),
  // BullMQ reads `offset + limit` jobs of each state to cut one page: keep that bounded.
  offset: integer({ minimum: 0, maximum: 10_000 }, { default: 0 }),
});
