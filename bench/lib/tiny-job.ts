import type { RunEnding } from '../../src/jobs/sqlite/sqlite-job-store';

/** A tiny job as the store benches write it: the `thread-id` task, and how its run ends. */
export const TINY_PAYLOAD = { task: 'thread-id', input: {}, encrypt: false };
export const TINY_ENDING: RunEnding = {
  status: 'succeeded',
  result: {
    value: { threadId: 1 },
    waitMs: 0,
    runMs: 0,
    runner: { host: 'h', pid: 1, threadId: 1 },
  },
};
