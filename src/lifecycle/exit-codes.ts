/**
 * How a corepool process ends; documented in docs/operations.md. Shared by the HTTP
 * processes and the cluster primary, so this file imports nothing.
 */
export const ExitCode = {
  /** Drained within the budget (or, for the primary: every process did). */
  OK: 0,
  /** Could not start (bad environment, no port) or failed unexpectedly. */
  FAILURE: 1,
  /** `SHUTDOWN_TIMEOUT_MS` ran out: unfinished requests were cancelled with SHUTTING_DOWN. */
  SHUTDOWN_TIMEOUT: 3,
  /** The primary gave up: processes kept dying right after being started. */
  CRASH_LOOP: 4,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
