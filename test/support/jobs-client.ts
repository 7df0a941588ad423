import { request } from 'node:http';
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

/** GET on a connection of its own (fetch would reuse one): a cluster spreads connections over its processes. */
export function getOnNewConnection(url: string): Promise<{ status: number; body: Json }> {
  return onNewConnection(url, 'GET');
}

/** A job submitted on a connection of its own, so that a cluster's processes all get some. */
export function submitOnNewConnection(
  url: string,
  task: string,
  input: object = {},
): Promise<{ status: number; body: Json }> {
  return onNewConnection(`${url}/api/jobs`, 'POST', JSON.stringify({ task, input }));
}

function onNewConnection(
  url: string,
  method: 'GET' | 'POST',
  body?: string,
): Promise<{ status: number; body: Json }> {
  return new Promise((resolve, reject) => {
    const headers = body === undefined ? {} : { 'content-type': 'application/json' };
    request(url, { method, headers, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as Json }),
      );
    })
      .on('error', reject)
      .end(body);
  });
}

export interface SseEvent {
  readonly id: number;
  readonly event: string;
  readonly data: Json;
}

/** Reads `GET /api/jobs/:id/events` until the server ends it; the events in the order they came. */
export async function readEvents(
  url: string,
  id: string,
  lastEventId?: number,
): Promise<SseEvent[]> {
  const response = await fetch(`${url}/api/jobs/${id}/events`, {
    headers: lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) },
  });
  if (response.status !== 200)
    throw new Error(`events: ${response.status} ${await response.text()}`);
  const text = await response.text();
  return text
    .split('\n\n')
    .map((frame) => Object.fromEntries(frame.split('\n').map((line) => line.split(/: (.*)/s, 2))))
    .filter((fields: Record<string, string>) => fields.id !== undefined)
    .map((fields: Record<string, string>) => ({
      id: Number(fields.id),
      event: fields.event as string,
      data: JSON.parse(fields.data as string) as Json,
    }));
}
