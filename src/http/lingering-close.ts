import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How long a connection whose request body was refused half-way keeps
 * discarding what the client still sends, after the answer and a FIN.
 */
export const LINGER_MS = 2_000;

/**
 * Closes a connection the way nginx's `lingering_close` does, once the answer
 * to a request whose body was not read to its end is written. Node would
 * close the socket at once; unread bytes in the kernel's buffer then make it
 * send a reset, and the client, still writing its body, loses the answer
 * (the 413 or 503 it should read). Instead: send a FIN after the answer,
 * discard what still arrives (nothing is buffered), and close when the client
 * closes its side or after `LINGER_MS`, whichever is first.
 */
export function lingerOnClose(request: IncomingMessage): void {
  const socket = request.socket;
  // Node's HTTP server closes a `Connection: close` socket with destroySoon().
  socket.destroySoon = function lingeringClose(this: Socket) {
    this.end();
    // The body's reader stopped at the refusal; flowing with no reader, its bytes are dropped.
    request.resume();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('end', () => this.destroy());
    this.once('close', () => clearTimeout(timer));
  };
}
