import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { IdleWaiter } from '../common/idle-waiter';

interface SocketState {
  /** Requests this connection has carried, the current one included. */
  served: number;
  active: number;
}

/**
 * Counts the requests in flight and remembers, per connection, how many it
 * has carried. The drain needs both: it waits for the count to reach zero,
 * closes keep-alive connections that sit idle, and refuses further requests
 * on connections that were already used — while the first request of a
 * connection accepted just before the listener closed is still served.
 */
export class ConnectionTracker {
  private readonly sockets = new Map<Socket, SocketState>();
  private readonly idle = new IdleWaiter();
  private active = 0;

  get inFlight(): number {
    return this.active;
  }

  /** Records a request; returns true when it is the first one on its connection. */
  begin(request: IncomingMessage, response: ServerResponse): boolean {
    const { socket } = request;
    let state = this.sockets.get(socket);
    if (state === undefined) {
      const created: SocketState = { served: 0, active: 0 };
      this.sockets.set(socket, created);
      socket.once('close', () => this.sockets.delete(socket));
      state = created;
    }
    const first = state.served === 0;
    state.served += 1;
    state.active += 1;
    this.active += 1;
    const done = state;
    // `close` fires once per response, whether it finished or the client left.
    response.once('close', () => {
      done.active -= 1;
      this.active -= 1;
      if (this.active === 0) this.idle.idle();
    });
    return first;
  }

  /** Closes every kept-alive connection that is between requests. */
  closeIdle(): void {
    for (const [socket, state] of this.sockets) {
      if (state.active === 0) socket.destroy();
    }
  }

  /** Resolves true once no request is in flight, or false when `timeoutMs` passes first. */
  whenIdle(timeoutMs: number): Promise<boolean> {
    return this.idle.wait(this.active === 0, timeoutMs);
  }
}
