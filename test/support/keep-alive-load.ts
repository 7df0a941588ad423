import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

/** One answered (or failed) request. */
export interface KeepAliveSample {
  /** When it was answered, ms on `performance.now()`'s clock. */
  readonly at: number;
  readonly latencyMs: number;
  /** `ok`, the problem `code`, `HTTP <status>`, the socket error's code, or `no answer`. */
  readonly outcome: string;
  /** The process that answered, from the `which-process` fixture task. */
  readonly pid: number | undefined;
  /** A refusal's `reason` (POOL_SATURATED: `deadline`, `queue-delay`, `backstop`, `memory`). */
  readonly reason?: string;
}

export interface KeepAliveLoadOptions {
  readonly url: string;
  /** Keep-alive connections, each carrying one request at a time, back to back. */
  readonly connections: number;
  /** CPU time per request (busy-wait on a pool thread). */
  readonly taskMs: number;
  /** Requests per second over all connections (paced, open loop); unset: as fast as answered. */
  readonly ratePerSecond?: number;
  /** A request unanswered after this long counts as `no answer`: it hung. */
  readonly requestTimeoutMs: number;
  /**
   * Close a connection idle this long, before the server would (a client's
   * guard against the idle-close race, docs/lifecycle.md); unset: keep it
   * until the server closes it.
   */
  readonly idleTimeoutMs?: number;
}

export interface KeepAliveLoad {
  /** Every outcome so far, in the order they happened. */
  readonly samples: readonly KeepAliveSample[];
  /** Stops sending; resolves once every request in flight has ended. */
  stop(): Promise<readonly KeepAliveSample[]>;
}

/**
 * A client that behaves like an ingress or any pooled HTTP client: a fixed
 * number of keep-alive connections (Node's own `http.Agent`), each sending
 * its next request the moment the previous one is answered (or on a pace).
 * Nothing is retried, so every reset, refusal and hang is counted.
 */
export function keepAliveLoad(options: KeepAliveLoadOptions): KeepAliveLoad {
  const agent = new Agent({
    keepAlive: true,
    maxSockets: options.connections,
    // On a socket in use, Node's agent only reports the timeout; on an idle one it closes it.
    ...(options.idleTimeoutMs === undefined ? {} : { timeout: options.idleTimeoutMs }),
  });
  const samples: KeepAliveSample[] = [];
  const body = JSON.stringify({ ms: options.taskMs });
  const target = new URL('/api/tasks/which-process', options.url);
  let stopped = false;
  const intervalMs =
    options.ratePerSecond === undefined ? 0 : (1000 * options.connections) / options.ratePerSecond;

  const send = () =>
    new Promise<KeepAliveSample>((done) => {
      const started = performance.now();
      let settled = false;
      const finish = (outcome: string, pid?: number, reason?: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const at = performance.now();
        done({ at, latencyMs: at - started, outcome, pid, ...(reason && { reason }) });
      };
      const req = request(
        target,
        {
          agent,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': body.length },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('error', (error: NodeJS.ErrnoException) => finish(error.code ?? 'error'));
          response.on('end', () => finish(...outcomeOf(response.statusCode ?? 0, text)));
        },
      );
      const timer = setTimeout(() => {
        finish('no answer');
        req.destroy();
      }, options.requestTimeoutMs);
      req.on('error', (error: NodeJS.ErrnoException) => finish(error.code ?? error.message));
      req.end(body);
    });

  const connection = async (index: number) => {
    // Spread the paced connections' first requests over one interval.
    let next = performance.now() + (intervalMs * index) / options.connections;
    while (!stopped) {
      const wait = next - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (stopped) break;
      next = Math.max(next + intervalMs, performance.now());
      samples.push(await send());
    }
  };
  const running = Promise.all(Array.from({ length: options.connections }, (_, i) => connection(i)));

  return {
    samples,
    stop: async () => {
      stopped = true;
      await running;
      agent.destroy();
      return samples;
    },
  };
}

function outcomeOf(status: number, text: string): [string, number?, string?] {
  try {
    const parsed = JSON.parse(text) as {
      result?: { pid?: number };
      code?: string;
      reason?: string;
    };
    if (status === 200) return ['ok', parsed.result?.pid];
    return [parsed.code ?? `HTTP ${status}`, undefined, parsed.reason];
  } catch {
    return [`HTTP ${status}`];
  }
}

/** Outcomes counted by label, e.g. `{ ok: 812, ECONNRESET: 1 }`. */
export function tallyOutcomes(samples: readonly KeepAliveSample[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { outcome } of samples) counts[outcome] = (counts[outcome] ?? 0) + 1;
  return counts;
}

/** Share of the successful answers in `[from, to)` that process `pid` gave, 0..1. */
export function shareOf(
  samples: readonly KeepAliveSample[],
  pid: number,
  from: number,
  to = Infinity,
): number {
  const answered = samples.filter((s) => s.outcome === 'ok' && s.at >= from && s.at < to);
  if (answered.length === 0) return 0;
  return answered.filter((s) => s.pid === pid).length / answered.length;
}

/** The processes that answered, by pid, in order of their first answer. */
export function answeringPids(samples: readonly KeepAliveSample[]): number[] {
  return [...new Set(samples.flatMap((s) => (s.pid === undefined ? [] : [s.pid])))];
}
