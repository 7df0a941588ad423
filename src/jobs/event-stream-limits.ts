import { Errors, type AppError } from '../common/app-error';

/**
 * A stream lasts as long as its job, often longer than a request: a client
 * refused is told to come back after a few seconds, or to poll the job.
 */
const STREAM_RETRY_AFTER_SECONDS = 5;

/**
 * Bounds the Server-Sent Events streams this process holds: per client and
 * in all. A stream costs a socket, a timer and a store read per poll for as
 * long as the client keeps it open, so without a bound one client could hold
 * thousands and starve everyone's reads. Counted per process: a stream lives
 * on the process that accepted its connection.
 */
export class EventStreamLimits {
  private open = 0;
  private readonly byClient = new Map<string, number>();

  constructor(
    private readonly maxStreams: number,
    private readonly maxPerClient: number,
  ) {}

  /** A place for one more stream of `client`: the function that gives it back, or the refusal. */
  acquire(client: string): (() => void) | AppError {
    const held = this.byClient.get(client) ?? 0;
    if (held >= this.maxPerClient) {
      return Errors.rateLimited(
        'event streams open',
        this.maxPerClient,
        STREAM_RETRY_AFTER_SECONDS,
      );
    }
    if (this.open >= this.maxStreams) {
      return Errors.streamsExhausted(this.maxStreams, STREAM_RETRY_AFTER_SECONDS);
    }
    this.open += 1;
    this.byClient.set(client, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open -= 1;
      const left = (this.byClient.get(client) ?? 1) - 1;
      if (left === 0) this.byClient.delete(client);
      else this.byClient.set(client, left);
    };
  }
}
