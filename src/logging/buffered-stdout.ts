import pino, { type DestinationStream } from 'pino';

/**
 * Writes of more than this many bytes to a pipe may interleave with another
 * process's writes (POSIX `PIPE_BUF` on Linux). The cluster's processes share
 * one stdout, so a write never holds more than this unless one line alone does.
 */
export const ATOMIC_WRITE_BYTES = 4096;

/** The longest a line waits for others to share its write. */
export const FLUSH_AFTER_MS = 10;

/**
 * stdout for the process's loggers: lines leave in writes of up to 4 KiB, at
 * the latest 10 ms after the first of them. pino's default stdout
 * (sonic-boom, asynchronous) hands each line to the libuv thread pool as soon
 * as no write is in flight: a thread woken, and an answer back to the loop,
 * for nearly every line — the largest cost of a tiny task's access line
 * (ADR 0028). The writes are still made by sonic-boom off the event loop: a
 * slow reader of stdout never blocks the service. What is pending is written
 * before the process exits.
 */
export class BufferedStdout implements DestinationStream {
  private pending = '';
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    /** pino's asynchronous destination on stdout (sonic-boom), or a test's. */
    private readonly out: Pick<ReturnType<typeof pino.destination>, 'write' | 'flush'>,
  ) {}

  write(line: string): void {
    const bytes = Buffer.byteLength(line);
    // A chunk is cut between lines, before the line that would take it past one atomic write.
    if (this.pendingBytes > 0 && this.pendingBytes + bytes > ATOMIC_WRITE_BYTES) {
      this.flushPending();
    }
    this.pending += line;
    this.pendingBytes += bytes;
    // Unref'd: a process about to exit writes what is pending in its exit handler.
    this.timer ??= setTimeout(() => this.flushPending(), FLUSH_AFTER_MS).unref();
  }

  /** pino's `logger.flush()`: the pending lines, then sonic-boom's own buffer. */
  flush(done?: (error?: Error) => void): void {
    this.flushPending();
    this.out.flush(done);
  }

  /** Hands the pending lines to sonic-boom as one write. */
  flushPending(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pendingBytes === 0) return;
    this.out.write(this.pending);
    this.pending = '';
    this.pendingBytes = 0;
  }
}

let stdout: BufferedStdout | undefined;

/** The process's one buffered stdout (every logger of the process shares it, in order). */
export function bufferedStdout(): DestinationStream {
  if (stdout === undefined) {
    // pino's own destination: asynchronous, flushed synchronously on exit, silent once the
    // reader has gone; a write holds at most one pipe-atomic chunk.
    const out = pino.destination({ dest: 1, sync: false, maxWrite: ATOMIC_WRITE_BYTES });
    const buffered = new BufferedStdout(out);
    // pino's exit handler was registered first, with the destination: hand it what is pending.
    process.on('exit', () => {
      buffered.flushPending();
      out.flushSync();
    });
    stdout = buffered;
  }
  return stdout;
}
