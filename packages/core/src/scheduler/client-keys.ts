/**
 * The fair-share key of callers nobody identified: one shared line, so
 * anonymous traffic is one client among the identified ones.
 */
export const SHARED_CLIENT_KEY = 'shared';

/**
 * The fair-share key of asynchronous jobs. Parentheses cannot appear in a
 * key the service takes from a header, so no client can pose as the jobs; the
 * scheduler caps the threads they may hold (`jobsMaxThreads`).
 */
export const JOBS_CLIENT_KEY = '(jobs)';
