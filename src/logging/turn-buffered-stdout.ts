import pino, { type DestinationStream } from 'pino';

/**
 * Writes of more than this many bytes to a pipe may interleave with another
 * process's writes (POSIX `PIPE_BUF` on Linux). The cluster's processes share
 * one stdout, so a write never holds more than this unless one line alone does.
 */
export const ATOMIC_WRITE_BYTES = 4096;

/**
 * stdout for the process's loggers: the lines of one turn of the event loop
 * leave together at the end of that turn (`setImmediate`). pino's default
 * stdout (sonic-boom, asynchronous) hands each line to the libuv thread pool
 * as soon as no write is in flight: a thread woken and an answer back to the
 * loop for nearly every line, the largest cost of a tiny task's access line
 * (ADR 0028). Here a turn's lines are one write (or one per 4 KiB), still
 * made by sonic-boom off the event loop: a slow reader of stdout never
 * blocks the loop. No line waits past its turn, and what is pending is
 * written before the process exits.
 */
export class TurnBufferedStdout implements DestinationStream {
  private pending: string[] = [];
  private scheduled = false;

  constructor(
    /** pino's asynchronous destination on stdout (sonic-boom), or a test's. */
    private readonly out: Pick<ReturnType<typeof pino.destination>, 'write' | 'flush'>,
  ) {}

  write(line: string): void {
    this.pending.push(line);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flushTurn());
  }

  /** pino's `logger.flush()`: the pending lines, then sonic-boom's own buffer. */
  flush(done?: (error?: Error) => void): void {
    this.flushTurn();
    this.out.flush(done);
  }

  /** Hands the turn's lines to sonic-boom in chunks that each stay one atomic write. */
  flushTurn(): void {
    this.scheduled = false;
    const lines = this.pending;
    if (lines.length === 0) return;
    this.pending = [];
    let chunk = '';
    let chunkBytes = 0;
    for (const line of lines) {
      const bytes = Buffer.byteLength(line);
      if (chunkBytes > 0 && chunkBytes + bytes > ATOMIC_WRITE_BYTES) {
        this.out.write(chunk);
        chunk = '';
        chunkBytes = 0;
      }
      chunk += line;
      chunkBytes += bytes;
    }
    this.out.write(chunk);
  }
}

let stdout: TurnBufferedStdout | undefined;

/** The process's one turn-buffered stdout (every logger of the process shares it, in order). */
export function turnBufferedStdout(): DestinationStream {
  if (stdout === undefined) {
    // pino's own destination: asynchronous, flushed synchronously on exit, silent once the
    // reader has gone; a write holds at most one pipe-atomic chunk.
    const out = pino.destination({ dest: 1, sync: false, maxWrite: ATOMIC_WRITE_BYTES });
    const buffered = new TurnBufferedStdout(out);
    // pino's exit handler was registered first, with the destination: hand it what is pending.
    process.on('exit', () => {
      buffered.flushTurn();
      out.flushSync();
    });
    stdout = buffered;
  }
  return stdout;
}
