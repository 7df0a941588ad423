import { randomUUID } from 'node:crypto';

export type Json = Record<string, any>;

/** A key prefix of its own per test run, so runs sharing one Redis never see each other's jobs. */
export const uniquePrefix = () => `corepool-test-${randomUUID().slice(0, 8)}`;

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export async function submitJob(url: string, task: string, input: object = {}, extra: Json = {}) {
  return fetch(`${url}/api/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ task, input, ...extra }),
  });
}

export async function submitOk(url: string, task: string, input: object = {}): Promise<string> {
  const response = await submitJob(url, task, input);
  const body = (await response.json()) as Json;
  if (response.status !== 202)
    throw new Error(`submit ${task}: ${response.status} ${JSON.stringify(body)}`);
  return body.id as string;
}

export async function getJob(url: string, id: string): Promise<Json> {
  return (await (await fetch(`${url}/api/jobs/${id}`)).json()) as Json;
}

/** Polls (bounded) until the job's status satisfies `done`. */
export async function waitForJob(
  url: string,
  id: string,
  done: (job: Json) => boolean = (job) => !['queued', 'running'].includes(job.status),
  timeoutMs = 60_000,
): Promise<Json> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    let job: Json | undefined;
    try {
      job = await getJob(url, id);
      if (done(job)) return job;
    } catch {
      // the replica may be restarting; ask again
    }
    if (Date.now() > until)
      throw new Error(`job ${id} not done in ${timeoutMs} ms: ${JSON.stringify(job)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
