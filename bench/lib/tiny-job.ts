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

/** The jobs of a running service that succeeded so far, from its queue-depth gauge (every process reads the one store). */
export async function succeededJobs(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const lines = text
    .split('\n')
    .filter((line) => line.startsWith('compute_jobs_queue_depth{') && line.includes('succeeded'));
  return Math.max(0, ...lines.map((line) => Number(line.slice(line.lastIndexOf(' ') + 1))));
}
