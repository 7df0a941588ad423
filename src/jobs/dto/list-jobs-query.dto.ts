import { inputSchema, integer, oneOf, string } from '@corepool/core';
import { JOB_STATUSES, type JobStatus } from '../job.types';

/** `GET /api/jobs?status=&limit=&cursor=`: newest first, one page at a time. */
export interface ListJobsQuery {
  status?: JobStatus;
  limit: number;
  cursor?: string;
}

export const listJobsQuery = inputSchema<ListJobsQuery>('ListJobsQuery', {
  status: oneOf(JOB_STATUSES, { optional: true }),
  limit: integer({ minimum: 1, maximum: 100 }, { default: 20 }),
  cursor: string(
    { maxLength: 200 },
    { optional: true, description: "The previous page's `links.next` carries it; opaque." },
  ),
});
