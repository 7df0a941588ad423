import pino, { type DestinationStream } from 'pino';

/**
 * Writes of more than this many bytes to a pipe may interleave with another
 * process's writes (POSIX `PIPE_BUF` on Linux). The cluster's processes share
 * one stdout, so a write never holds more than this unless one line alone does.
 */
const ATOMIC_WRITE_BYTES = 4096;

/**
 * stdout for the process's loggers: the lines of one turn of the event loop
 * leave in one `write` at the end of that turn (`setImmediate`), not one
 * each. pino's default stdout hands each line to the libuv thread pool (a
 * thread woken, an answer back to the loop) unless a write is in flight:
 * per tiny task, that was the access line's largest cost (ADR 0026). No line
 * waits past its turn, and what is pending is written before the process
 * exits. pino's own writer (sonic-boom, synchronous) does each write, with
 * its retries on a full pipe and its silence once the reader has gone.
 */
class TurnBufferedStdout implements DestinationStream {
  private pending: string[] = [];
  private scheduled = false;
  private readonly out = pino.destination({ dest: 1, sync: true });

  constructor() {
    process.on('exit', () => this.flushSync());
  }

  write(line: string): void {
    this.pending.push(line);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flushSync());
  }

  /** pino's `logger.flush()`: the pending lines, now. */
  flush(done?: (error?: Error) => void): void {
    this.flushSync();
    done?.();
  }

  /** Writes the pending lines in as few writes as keep each one atomic. */
  flushSync(): void {
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
  stdout ??= new TurnBufferedStdout();
  return stdout;
}
