import type { Job } from 'bullmq';
import type { JobEvent } from './job.types';

/**
 * A BullMQ job's events are its log (`job.log`, `getJobLogs`): one JSON line
 * per status change or progress report, removed with the job. An event's id
 * is its position in the log, counted from 1.
 */
export function appendEvent(job: Pick<Job, 'log'>, event: Omit<JobEvent, 'id'>): Promise<number> {
  return job.log(JSON.stringify(event));
}

/** Log lines as events, the first having id `firstId`. */
export function parseEvents(lines: readonly string[], firstId: number): JobEvent[] {
  return lines.map((line, index) => ({
    id: firstId + index,
    ...(JSON.parse(line) as Omit<JobEvent, 'id'>),
  }));
}
