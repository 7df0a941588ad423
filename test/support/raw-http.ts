import { connect, type Socket } from 'node:net';

export interface RawResponse {
  /** Everything the server wrote before it closed the connection or the wait ended. */
  readonly text: string;
  /** Status codes of every response in `text`, in order. */
  readonly statuses: number[];
  /** True when the server closed the connection; false when the wait ended first. */
  readonly closed: boolean;
}

/** Status codes of every HTTP response in a raw byte stream. */
export function statusesOf(text: string): number[] {
  return [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
}

/** The body of the first response, parsed as JSON (undefined when there is none). */
export function firstBody(text: string): Record<string, unknown> | undefined {
  const start = text.indexOf('\r\n\r\n');
  const end = text.indexOf('HTTP/1.1 ', start);
  if (start < 0) return undefined;
  try {
    return JSON.parse(text.slice(start + 4, end < 0 ? undefined : end)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * Writes raw bytes to the server (in parts, with pauses, if asked) and
 * collects the answer until the server closes the connection or `waitMs` passes.
 */
export function rawExchange(
  port: number,
  parts: ReadonlyArray<string | Buffer>,
  { waitMs = 5_000, pauseMs = 0, endAfterWrite = false } = {},
): Promise<RawResponse> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ text, statuses: statusesOf(text), closed });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.once('connect', () => {
      void (async () => {
        for (const part of parts) {
          if (socket.destroyed) return;
          socket.write(part);
          if (pauseMs > 0) await new Promise((done) => setTimeout(done, pauseMs));
        }
        if (endAfterWrite && !socket.destroyed) socket.end();
      })();
    });
  });
}

/** One request as raw bytes; `Content-Length` is set from the body unless given. */
export function rawRequest(
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer | string = '',
): Buffer {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const all: Record<string, string> = { host: '127.0.0.1', ...headers };
  if (!Object.keys(all).some((name) => name.toLowerCase() === 'content-length')) {
    all['content-length'] = String(bytes.length);
  }
  const head = Object.entries(all)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return Buffer.concat([Buffer.from(`${method} ${path} HTTP/1.1\r\n${head}\r\n`, 'latin1'), bytes]);
}
