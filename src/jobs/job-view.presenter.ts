import { httpOf } from '../http/error-table';
import type { JobView } from './job.types';

/** A job's error as clients see it: the stored code and detail, with the status and title the synchronous API would answer. */
export interface JobErrorView {
  readonly code: string;
  readonly status: number;
  readonly title: string;
  readonly detail: string;
}

export type PresentedJob = Omit<JobView, 'error'> & { readonly error?: JobErrorView };

/**
 * Jobs store codes; the HTTP meaning of a code (status, title) is added when
 * the job is shown, from the same error table the problem responses use.
 */
export function presentJob(job: JobView): PresentedJob {
  const { error, ...rest } = job;
  if (error === undefined) return rest;
  const { status, title } = httpOf(error.code);
  return { ...rest, error: { code: error.code, status, title, detail: error.detail } };
}
