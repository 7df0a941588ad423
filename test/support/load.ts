/** What a load run counted: nothing is lost if sent = succeeded + sum(failed). */
export interface LoadCounts {
  sent: number;
  succeeded: number;
  /** By problem `code`, or by `HTTP <status>` / `network error` when there is none. */
  failed: Record<string, number>;
}

export interface LoadOptions {
  readonly url: string;
  readonly path: string;
  readonly body?: unknown;
  /** Requests in flight at once. */
  readonly concurrency: number;
  /** Stops sending when this resolves (requests in flight still complete). */
  readonly until: Promise<unknown>;
  /** Safety bound on requests per worker. */
  readonly maxPerWorker?: number;
  /** A request unanswered after this long is counted as `timeout` (default 30 s). */
  readonly requestTimeoutMs?: number;
}

/**
 * Keeps `concurrency` requests in flight until told to stop, and counts every
 * outcome. Each request uses a fresh connection so that a process dying only
 * fails the requests it was serving.
 */
export async function steadyLoad(options: LoadOptions): Promise<LoadCounts> {
  const counts: LoadCounts = { sent: 0, succeeded: 0, failed: {} };
  let stopped = false;
  void options.until.then(() => {
    stopped = true;
  });
  const worker = async () => {
    for (let i = 0; !stopped && i < (options.maxPerWorker ?? 10_000); i++) {
      counts.sent += 1;
      const outcome = await send(options);
      if (outcome === 'ok') counts.succeeded += 1;
      else counts.failed[outcome] = (counts.failed[outcome] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return counts;
}

async function send({ url, path, body, requestTimeoutMs = 30_000 }: LoadOptions): Promise<string> {
  const signal = AbortSignal.timeout(requestTimeoutMs);
  try {
    const response = await fetch(`${url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers:
        body === undefined
          ? { connection: 'close' }
          : { 'content-type': 'application/json', connection: 'close' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
    const text = await response.text();
    if (response.ok) return 'ok';
    try {
      return (JSON.parse(text) as { code?: string }).code ?? `HTTP ${response.status}`;
    } catch {
      return `HTTP ${response.status}`;
    }
  } catch {
    return signal.aborted ? 'timeout' : 'network error';
  }
}

/** One line a reader can check: sent, succeeded, failed by code. */
export function describeCounts(label: string, counts: LoadCounts): string {
  const failed = Object.entries(counts.failed)
    .map(([code, n]) => `${code}=${n}`)
    .join(' ');
  return `${label}: sent ${counts.sent}, succeeded ${counts.succeeded}, failed ${failed === '' ? 0 : failed}`;
}
