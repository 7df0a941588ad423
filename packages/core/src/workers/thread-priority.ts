import { getPriority, setPriority } from 'node:os';

/** The highest nice value, the lowest priority. */
export const LOWEST_PRIORITY = 19;

/**
 * Whether a thread can lower its own priority without touching the others.
 * Linux keeps a nice value per thread (setpriority(2), NOTES); elsewhere the
 * same call renices the whole process, event loop included.
 */
export const threadPrioritySupported = process.platform === 'linux';

/**
 * Adds `increment` to the calling thread's nice value (capped at 19), so the
 * event loop gets the CPU first. Lowering a priority needs no privilege.
 * Does nothing where only a whole process can be reniced.
 */
export function lowerThreadPriority(increment: number): void {
  if (increment <= 0 || !threadPrioritySupported) return;
  setPriority(Math.min(LOWEST_PRIORITY, getPriority() + increment));
}
