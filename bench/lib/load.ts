import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { summarize, type LatencySummary } from './stats';

export interface Target {
  readonly url: string;
  readonly path: string;
  readonly method?: 'GET' | 'POST';
  readonly body?: string | Buffer;
  readonly contentType?: string;
  /** Sent with every request (e.g. a `traceparent`). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface Throughput {
  /** Successful (2xx) responses per second. */
  readonly perSecond: number;
  readonly ok: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly seconds: number;
}

interface Running {
  readonly instance: autocannon.Instance;
  readonly result: Promise<autocannon.Result>;
}

function fire(target: Target, options: Partial<autocannon.Options>): Running {
  let instance: autocannon.Instance | undefined;
  const result = new Promise<autocannon.Result>((done, fail) => {
    instance = autocannon(
      {
        url: `${target.url}${target.path}`,
        method: target.method ?? 'GET',
        body: target.body,
        headers: {
          ...target.headers,
          ...(target.contentType === undefined ? {} : { 'content-type': target.contentType }),
        },
        // Long tasks queue behind each other: never count a slow answer as an error.
        timeout: 120,
        ...options,
      },
      (error: unknown, outcome: autocannon.Result) =>
        error === null || error === undefined ? done(outcome) : fail(toError(error)),
    );
  });
  if (instance === undefined) throw new Error('autocannon did not start');
  return { instance, result };
}

const toError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));

function toThroughput(result: autocannon.Result): Throughput {
  const ok = result['2xx'];
  return {
    perSecond: ok / result.duration,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    seconds: result.duration,
  };
}

/** Closed-loop load: `connections` requests always in flight for `seconds`. */
export async function throughput(
  target: Target,
  connections: number,
  seconds: number,
): Promise<Throughput> {
  return toThroughput(await fire(target, { connections, duration: seconds }).result);
}

/**
 * About `seconds` of load at the expected rate, as a fixed number of requests,
 * so that it ends with every request answered. A run stopped on time drops
 * the requests in flight, and the service cancels a running task whose
 * client has gone by stopping its thread (Piscina cannot stop running
 * JavaScript otherwise): a measurement right after would start on fresh, cold
 * threads, and only the service's, since the baselines cancel nothing.
 */
export async function warmUp(
  target: Target,
  connections: number,
  seconds: number,
  expectedPerSecond: number,
): Promise<Throughput> {
  const amount = Math.max(connections, Math.round(expectedPerSecond * seconds));
  return fixedAmount(target, connections, amount);
}

/** Exactly `amount` requests over `connections` connections (e.g. for memory growth). */
export async function fixedAmount(
  target: Target,
  connections: number,
  amount: number,
): Promise<Throughput> {
  return toThroughput(await fire(target, { connections, amount }).result);
}

/** Load that runs until stopped, e.g. to keep every thread busy while something else is measured. */
export function background(target: Target, connections: number): () => Promise<Throughput> {
  const running = fire(target, { connections, duration: 3600 });
  return async () => {
    running.instance.stop();
    return toThroughput(await running.result);
  };
}

/**
 * `amount` requests one after another, each timed exactly (autocannon's own
 * histogram keeps whole milliseconds). Returns each request's time in ms.
 */
export async function timedSequence(target: Target, amount: number): Promise<number[]> {
  const times: number[] = [];
  const running = fire(target, { connections: 1, amount });
  running.instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) times.push(responseTime);
  });
  const result = await running.result;
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${target.path}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }
  return times;
}

/**
 * Samples `GET path` at a steady rate, open loop: each request leaves on
 * schedule whether or not the previous one was answered, so a blocked server
 * cannot hide its backlog by holding the sender back (coordinated omission).
 * A probe, not load: a Kubernetes liveness check behaves the same way.
 */
export async function probe(
  url: string,
  path: string,
  ratePerSecond: number,
  seconds: number,
): Promise<LatencySummary & { failed: number; timedOut: number }> {
  const agent = new Agent({ keepAlive: true });
  const latencies: number[] = [];
  let failed = 0;
  let timedOut = 0;
  const pending: Promise<void>[] = [];
  const intervalMs = 1000 / ratePerSecond;
  const started = performance.now();
  for (let i = 0; i < ratePerSecond * seconds; i++) {
    const wait = started + i * intervalMs - performance.now();
    if (wait > 0) await new Promise((done) => setTimeout(done, wait));
    // Timed from when it really left: a late timer in this process is not the server's delay.
    const sentAt = performance.now();
    pending.push(
      getOnce(agent, `${url}${path}`).then(
        () => void latencies.push(performance.now() - sentAt),
        (error: unknown) => {
          // An unanswered probe counts at the timeout: a lower bound, but never left out.
          if (error instanceof ProbeTimeout) {
            timedOut += 1;
            latencies.push(PROBE_TIMEOUT_MS);
          } else failed += 1;
        },
      ),
    );
  }
  await Promise.all(pending);
  agent.destroy();
  return { ...summarize(latencies), failed, timedOut };
}

/** Longer than any probe of a working service; bounds how long a blocked one is waited for. */
export const PROBE_TIMEOUT_MS = 10_000;

class ProbeTimeout extends Error {}

function getOnce(agent: Agent, url: string): Promise<void> {
  return new Promise((done, fail) => {
    const req = request(url, { agent, timeout: PROBE_TIMEOUT_MS }, (response) => {
      response.resume();
      response.once('end', () =>
        response.statusCode === 200 ? done() : fail(new Error(`HTTP ${response.statusCode}`)),
      );
    });
    req.once('timeout', () => req.destroy(new ProbeTimeout()));
    req.once('error', fail);
    req.end();
  });
}
