import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { IdleWaiter } from '@corepool/core/host';

interface SocketState {
  /** When the connection was accepted (or first seen), on `performance.now()`'s clock. */
  readonly openedAt: number;
  /** Its own share of the age bound, 0.9 to 1.1: connections opened together close apart. */
  readonly ageShare: number;
  /** Requests in flight on it (more than one only when the client pipelines). */
  active: number;
  /** When its last response ended, or it was accepted: how long it has sat unused. */
  idleSince: number;
  /** Bytes read and written when `closeSilent` last looked. */
  traffic: number;
  /** Since when `closeSilent` has seen no traffic while a request was in flight. */
  quietSince: number;
}

/** Where a response in flight keeps the state of its connection. */
const CONNECTION = Symbol('connection');
type TrackedResponse = ServerResponse & { [CONNECTION]: SocketState };

/**
 * Resolves in the check phase of the next turn of the event loop, right after
 * its poll: whatever the kernel had for this process by then (a connection
 * waiting to be accepted, a request on a kept-alive one) has been taken. From
 * a signal's handler or a timer, one `setImmediate` would run before the poll.
 */
export function afterPoll(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/** How often `whenClosed` looks for connections that have settled, at most. */
const MAX_SETTLE_POLL_MS = 100;

/**
 * Every open connection of the server, with its age and whether a request is
 * in flight on it, and the count of requests in flight. The drain waits for
 * the connections to close; the connection policy reads their age.
 */
export class ConnectionTracker {
  private readonly sockets = new Map<Socket, SocketState>();
  private readonly idle = new IdleWaiter();
  private readonly closed = new IdleWaiter();
  private active = 0;
  private answered = 0;
  /** Responses still to close their connection, as `shed` asked. */
  private closing = 0;

  get inFlight(): number {
    return this.active;
  }

  get openConnections(): number {
    return this.sockets.size;
  }

  private readonly responseClosed = (() => {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the listener's own `this` is the response
    const tracker = this;
    return function (this: TrackedResponse): void {
      const state = this[CONNECTION];
      tracker.answered += 1;
      state.active -= 1;
      state.idleSince = performance.now();
      tracker.active -= 1;
      if (tracker.active === 0) tracker.idle.idle();
    };
  })();

  /** A connection was accepted: tracked from now, so one that never sends a request is closed too. */
  opened(socket: Socket): void {
    this.stateOf(socket);
  }

  /** Records a request until its response closes. */
  begin(request: IncomingMessage, response: ServerResponse): void {
    const state = this.stateOf(request.socket);
    state.active += 1;
    this.active += 1;
    // `close` fires once per response, whether it finished or the client left. One listener
    // shared by every response, which carries its connection's state: no closure and no
    // `once` wrapper per request (ADR 0023).
    (response as TrackedResponse)[CONNECTION] = state;
    response.on('close', this.responseClosed);
  }

  /**
   * Asks `fraction` of the open connections to move: the next that many
   * responses close their connections (`takeClose`), and their clients
   * reconnect; while this process does not accept, another one takes them.
   * Not the oldest connections, the busiest: a client pool (Node's Agent
   * reuses the connection freed last) may carry all its traffic on a few
   * connections and leave the rest idle, and closing an idle one moves
   * nothing. `of: 'requests'` counts the share of the requests in flight
   * instead. Returns how many will close.
   */
  shed(fraction: number, of: 'connections' | 'requests' = 'connections'): number {
    const share = Math.min(1, Math.max(0, fraction));
    // Of the requests in flight: each carries one task, and the tasks are what is uneven
    // (ADR 0027); idle connections (a probe's, a pool's spare) would inflate the count.
    this.closing =
      of === 'requests' ? Math.round(share * this.active) : Math.ceil(share * this.sockets.size);
    return this.closing;
  }

  /** Responses still to close their connection, as `shed` asked. */
  get closingLeft(): number {
    return this.closing;
  }

  /** Whether this response must close its connection because `shed` asked for it; counts it. */
  takeClose(): boolean {
    if (this.closing === 0) return false;
    this.closing -= 1;
    return true;
  }

  /** Requests answered (or abandoned by their client) since the last call: this process's load. */
  takeAnswered(): number {
    const answered = this.answered;
    this.answered = 0;
    return answered;
  }

  /**
   * Whether the connection has lived past `maxAgeMs`, give or take its own 10 %
   * (gRPC's jitter on `MAX_CONNECTION_AGE`): a crowd that connected at once
   * reconnects spread over a fifth of the bound, not in one wave.
   */
  outlived(socket: Socket, maxAgeMs: number): boolean {
    const state = this.sockets.get(socket);
    return state !== undefined && performance.now() - state.openedAt >= maxAgeMs * state.ageShare;
  }

  /**
   * Closes each connection that has had no request in flight for at least
   * `settleMs`, counted from `since` at the earliest (the drain's start, so
   * that a connection idle when the drain began gets that long to carry one
   * more request, whose answer closes it the race-free way). A connection is
   * never closed the instant it falls idle: a keep-alive client may already
   * have written its next request, which the close would reset (see
   * docs/lifecycle.md, "The idle-close race"). Nor one whose reading is paused:
   * its next request may wait unread in the kernel.
   */
  closeSettled(settleMs: number, since = -Infinity): number {
    const now = performance.now();
    let closedNow = 0;
    for (const [socket, state] of this.sockets) {
      if (state.active > 0 || socket.isPaused()) continue;
      if (now - Math.max(state.idleSince, since) >= settleMs) {
        socket.destroy();
        closedNow += 1;
      }
    }
    return closedNow;
  }

  /**
   * Closes each connection that has had a request in flight and no traffic either
   * way for at least `silentMs`: a client that stopped reading its response, or
   * that went quiet in the middle of its request. Called on an interval, it costs
   * nothing per request; Node's own socket timeout re-arms a timer on every read
   * and every write, four times in a plain request (ADR 0025).
   */
  closeSilent(silentMs: number): number {
    const now = performance.now();
    let closedNow = 0;
    for (const [socket, state] of this.sockets) {
      const traffic = socket.bytesRead + socket.bytesWritten;
      if (state.active === 0 || traffic !== state.traffic) {
        state.traffic = traffic;
        state.quietSince = now;
      } else if (now - state.quietSince >= silentMs) {
        socket.destroy();
        closedNow += 1;
      }
    }
    return closedNow;
  }

  /** Resolves true once no request is in flight, or false when `timeoutMs` passes first. */
  whenIdle(timeoutMs: number): Promise<boolean> {
    return this.idle.wait(this.active === 0, timeoutMs);
  }

  /**
   * Resolves true once every connection has closed — busy ones after their
   * response (which the caller makes say `Connection: close`), idle ones once
   * they have settled — or false when `timeoutMs` passes first.
   */
  async whenClosed(settleMs: number, timeoutMs: number): Promise<boolean> {
    const since = performance.now();
    const deadline = since + timeoutMs;
    const pollMs = Math.max(1, Math.min(MAX_SETTLE_POLL_MS, settleMs / 4));
    for (;;) {
      // Right after a poll of the sockets: every request that reached the kernel by then has
      // been read and counts as in flight, so no connection is closed over an unread request.
      await afterPoll();
      this.closeSettled(settleMs, since);
      if (this.sockets.size === 0) return true;
      const left = deadline - performance.now();
      if (left <= 0) return false;
      await this.closed.wait(false, Math.min(pollMs, left));
    }
  }

  private stateOf(socket: Socket): SocketState {
    const known = this.sockets.get(socket);
    if (known !== undefined) return known;
    const now = performance.now();
    const state: SocketState = {
      openedAt: now,
      ageShare: 0.9 + 0.2 * Math.random(),
      active: 0,
      idleSince: now,
      traffic: 0,
      quietSince: now,
    };
    this.sockets.set(socket, state);
    socket.once('close', () => {
      this.sockets.delete(socket);
      if (this.sockets.size === 0) this.closed.idle();
    });
    return state;
  }
}
