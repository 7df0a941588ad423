import type { Readable } from 'node:stream';
import { errorCodes, type FastifyRequest } from 'fastify';

type BodyDone = (error: Error | null, body?: Buffer) => void;

/**
 * Reads a request's body into one Buffer, where Fastify's `parseAs: 'buffer'`
 * would. A body of announced length that is not coded is copied into a buffer
 * of that size as each chunk arrives: Fastify keeps the chunks and joins them
 * at the end, which held the event loop for hundreds of milliseconds per
 * 64 MiB body (the copy and the page faults of the new buffer in one go) and
 * held the body twice meanwhile (ADR 0051). A chunked or coded body, whose
 * size is not known up front, is joined at the end.
 *
 * Its checks are Fastify's: more than `limitBytes` is 413, bytes that do not
 * match `Content-Length` are 400, and a stream error without a client-error
 * status becomes 400.
 */
export function readBody(
  request: FastifyRequest,
  payload: Readable,
  limitBytes: number,
  done: BodyDone,
): void {
  const announced = Number(request.headers['content-length']);
  if (announced > limitBytes) return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
  const sized = announced >= 0 && request.headers['content-encoding'] === undefined;
  const collector = sized ? new SizedBody(announced) : new JoinedBody();
  let received = 0;
  const stop = () => {
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onEnd);
  };
  function onData(chunk: Buffer): void {
    received += chunk.length;
    if (received > limitBytes) {
      stop();
      return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    }
    if (!collector.add(chunk)) {
      stop();
      return done(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
    }
  }
  function onEnd(error?: Error & { statusCode?: number }): void {
    stop();
    if (error !== undefined) {
      if (!(typeof error.statusCode === 'number' && error.statusCode >= 400))
        error.statusCode = 400;
      return done(error);
    }
    // A coded body's `Content-Length` counts its coded bytes (body-guard.ts counts them).
    const wire = (payload as { receivedEncodedLength?: number }).receivedEncodedLength || received;
    if (!Number.isNaN(announced) && wire !== announced) {
      return done(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
    }
    done(null, collector.body(received));
  }
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onEnd);
  payload.resume();
}

/** A body of known size, copied into place chunk by chunk. */
class SizedBody {
  private readonly bytes: Buffer;
  private offset = 0;

  constructor(size: number) {
    // Pooled below 4 KiB, its own ArrayBuffer above (so a thread can take it by transfer),
    // as Buffer.concat would give; left unfilled, each page is touched when its chunk lands.
    this.bytes = Buffer.allocUnsafe(size);
  }

  /** False when the chunk would overrun the announced size. */
  add(chunk: Buffer): boolean {
    if (this.offset + chunk.length > this.bytes.length) return false;
    this.offset += chunk.copy(this.bytes, this.offset);
    return true;
  }

  body(): Buffer {
    return this.bytes;
  }
}

/** A body of unknown size: its chunks, joined at its end. */
class JoinedBody {
  private readonly chunks: Buffer[] = [];

  add(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    return true;
  }

  body(received: number): Buffer {
    // Always a copy, never a view of a chunk the stream may reuse.
    return Buffer.concat(this.chunks, received);
  }
}
