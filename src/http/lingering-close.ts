import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How long a connection whose request body was refused half-way keeps
 * discarding what the client still sends, after the answer and a FIN.
 */
export const LINGER_MS = 2_000;

/**
 * How much of what still arrives is read and dropped; past it the connection
 * is no longer read, and closes at `LINGER_MS`. Reading a refused burst of big
 * uploads to its end cost the event loop more than the bodies it admitted
 * (ADR 0051).
 */
export const LINGER_BYTES = 1024 * 1024;

/**
 * Closes a connection the way nginx's `lingering_close` does, once the answer
 * to a request whose body was not read to its end is written. Node would
 * close the socket at once; unread bytes in the kernel's buffer then make it
 * send a reset, and the client, still writing its body, loses the answer
 * (the 413 or 503 it should read). Instead: send a FIN after the answer,
 * discard what still arrives (nothing is buffered) up to `LINGER_BYTES`, and
 * close when the client closes its side or after `LINGER_MS`, whichever is first.
 * Called before the answer is written.
 */
export function lingerOnClose(request: IncomingMessage): void {
  // Read from now on, so that Node does not take the rest over once the answer is written: it
  // would drop every byte still sent, as fast as they come, without a count to stop at.
  let dropped = 0;
  request.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    // Paused, the socket stops being read once Node's small buffer is full: the client's
    // writes wait in the kernel, with the answer already on its way to it.
    if (dropped > LINGER_BYTES) request.pause();
  });
  request.resume();
  const socket = request.socket;
  // Node's HTTP server closes a `Connection: close` socket with destroySoon().
  socket.destroySoon = function lingeringClose(this: Socket) {
    this.end();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('end', () => this.destroy());
    this.once('close', () => clearTimeout(timer));
  };
}
