import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, Errors } from '../common/app-error';
import type { BodyLimit } from './body-limit';
import type { BodyMemoryBudget } from './body-memory-budget';
import { bodyDecoder } from './content-encoding';

/**
 * Bodies are held only until their response is over, so a refusal's retry has
 * a fair chance a second or two later; an estimate from the scheduler would
 * not see uploads still arriving.
 */
export const MEMORY_RETRY_AFTER_SECONDS = 2;

const memoryRefusal = () => Errors.poolSaturated(MEMORY_RETRY_AFTER_SECONDS, 'memory');

/** One request's share of the budget: grows with what it announces and receives, freed once. */
class BodyHolding {
  private reserved = 0;

  constructor(private readonly budget: BodyMemoryBudget) {}

  /** Makes the holding cover `bytes` in all; false if the budget cannot. */
  cover(bytes: number): boolean {
    if (bytes <= this.reserved) return true;
    if (!this.budget.tryReserve(bytes - this.reserved)) return false;
    this.reserved = bytes;
    return true;
  }

  release(): void {
    this.budget.release(this.reserved);
    this.reserved = 0;
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** This request's share of the body memory budget, once it has one (hooks.ts declares it). */
    bodyHolding: BodyHolding | null;
  }
}

function holdingOf(request: FastifyRequest, reply: FastifyReply, budget: BodyMemoryBudget) {
  // On the request rather than in a WeakMap: adding a key to a WeakMap cost every request (ADR 0050).
  let holding = request.bodyHolding;
  if (holding === null) {
    const created = new BodyHolding(budget);
    request.bodyHolding = created;
    // 'close' comes once the response is written or the connection is gone: the body
    // (and its task, which the response waits for) is no longer held.
    reply.raw.once('close', () => created.release());
    holding = created;
  }
  return holding;
}

/** True when a request announces a body (`Content-Length` above 0, or chunked). */
export function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return length === undefined ? request.headers['transfer-encoding'] !== undefined : length !== '0';
}

/**
 * `onRequest`: a body announced with its `Content-Length` reserves that much of
 * the budget before a byte of it is read, or is refused at once (503, reason
 * `memory`).
 */
export function reserveAnnouncedBody(budget: BodyMemoryBudget) {
  return (request: FastifyRequest, reply: FastifyReply): AppError | undefined => {
    const length = Number(request.headers['content-length'] ?? 0);
    if (!(length > 0)) return undefined;
    return holdingOf(request, reply, budget).cover(length) ? undefined : memoryRefusal();
  };
}

/**
 * `preParsing`: `100 Continue` to a client that asked for it, then the body
 * as it is read, decoded from its `Content-Encoding`
 * (415 for a coding not accepted) and held, chunk by chunk, to the request's
 * own limit (413; for a binary task, the cap its options may set, so bad
 * options get 400 first) and to the memory budget (503), chunked or not,
 * JSON or binary. The chunk that crosses a line is not kept and nothing after it is
 * read: the response closes the connection (hooks.ts, `onSend`).
 */
export function guardBodyStream(
  budget: BodyMemoryBudget,
  limitFor: (request: FastifyRequest) => BodyLimit | AppError,
) {
  return (
    request: FastifyRequest,
    reply: FastifyReply,
    payload: Readable,
    done: (error: AppError | null, stream?: Readable) => void,
  ): void => {
    if (!hasBody(request)) return done(null, payload);
    let decoder: Transform | undefined;
    try {
      decoder = bodyDecoder(request.headers['content-encoding']);
    } catch (error) {
      return done(error as AppError);
    }
    // A plain body of announced length was checked whole in `onRequest` (its route's
    // limit, its share of the budget), and Node reads no byte past `Content-Length`:
    // nothing is left to watch, and the common request is spared a stream.
    const checkedWhole =
      decoder === undefined &&
      request.headers['content-length'] !== undefined &&
      request.headers['transfer-encoding'] === undefined;
    // Known before the first byte (a binary task's options may set it), so that a
    // refusal, or options that do not validate, come before the client sends it.
    const limit = checkedWhole ? undefined : limitFor(request);
    if (limit instanceof AppError) return done(limit);
    // Admitted: a client that waits for it may now send its body (hooks.ts, checkContinue).
    if (request.headers.expect?.toLowerCase() === '100-continue') reply.raw.writeContinue();
    if (limit === undefined) return done(null, payload);
    const guard = new BodyGuard(limit, holdingOf(request, reply, budget));
    if (decoder === undefined) {
      payload.pipe(guard);
    } else {
      const coded = decoder;
      // Fastify compares the bytes received with `Content-Length` on this property.
      payload.on('data', (chunk: Buffer) => (guard.receivedEncodedLength += chunk.length));
      payload.pipe(coded).pipe(guard);
      // Corrupt coded bytes are the client's error: 400, like malformed JSON.
      coded.once('error', (error) =>
        guard.destroy(Errors.validationFailed(`The body could not be decoded (${error.message})`)),
      );
      guard.once('close', () => {
        payload.unpipe(coded);
        coded.destroy();
      });
    }
    done(null, guard);
  };
}

/** Passes a body's bytes on while they fit its limit and the memory budget. */
class BodyGuard extends Transform {
  receivedEncodedLength = 0;
  private received = 0;

  constructor(
    private readonly limit: BodyLimit,
    private readonly holding: BodyHolding,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.received += chunk.length;
    if (this.received > this.limit.bytes) return callback(this.limit.refusal());
    if (!this.holding.cover(this.received)) return callback(memoryRefusal());
    callback(null, chunk);
  }
}
