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
  /** Gives up on a request after this long, counted as `no answer` (default 30 s). */
  readonly requestTimeoutMs?: number;
  /** Called with each outcome as it happens (`ok` or the failure's label). */
  readonly onResult?: (outcome: string) => void;
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
      options.onResult?.(outcome);
      if (outcome === 'ok') counts.succeeded += 1;
      else counts.failed[outcome] = (counts.failed[outcome] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return counts;
}

async function send({ url, path, body, requestTimeoutMs = 30_000 }: LoadOptions): Promise<string> {
  try {
    const response = await fetch(`${url}${path}`, {
      signal: AbortSignal.timeout(requestTimeoutMs),
      method: body === undefined ? 'GET' : 'POST',
      headers:
        body === undefined
          ? { connection: 'close' }
          : { 'content-type': 'application/json', connection: 'close' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.ok) return 'ok';
    try {
      return (JSON.parse(text) as { code?: string }).code ?? `HTTP ${response.status}`;
    } catch {
      return `HTTP ${response.status}`;
    }
  } catch (error) {
    // Refused: the service was not listening, so it never accepted the request.
    if ((error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED') return 'refused';
    if ((error as Error).name === 'TimeoutError') return 'no answer';
    return 'network error';
  }
}

/** One line a reader can check: sent, succeeded, failed by code. */
export function describeCounts(label: string, counts: LoadCounts): string {
  const failed = Object.entries(counts.failed)
    .map(([code, n]) => `${code}=${n}`)
    .join(' ');
  return `${label}: sent ${counts.sent}, succeeded ${counts.succeeded}, failed ${failed === '' ? 0 : failed}`;
}

/** What a process logs when a death ends its listener hold (`ShutdownService.acceptAgain`). */
const ACCEPTING_AGAIN = 'Accepting again: a process died while this one held its listener';

/**
 * The failures of a `kill -9` of one cluster process under load, apart:
 * `inFlight`, the requests the killed process held (at most one per client),
 * and `refused`, connects no process accepted. Those happen in one race only:
 * the survivor held its listener (a rebalance) when the other died, so until
 * its listen came back from the primary nothing listened (docs/lifecycle.md).
 * `unexplainedRefusals` counts refusals without the survivor saying so.
 */
export function killFailures(
  counts: LoadCounts,
  lines: readonly string[],
): { inFlight: number; refused: number; unexplainedRefusals: number } {
  const { refused = 0, ...others } = counts.failed;
  const inFlight = Object.values(others).reduce((sum, n) => sum + n, 0);
  const explained = lines.some((line) => line.includes(ACCEPTING_AGAIN));
  return { inFlight, refused, unexplainedRefusals: explained ? 0 : refused };
}
