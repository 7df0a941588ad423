import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface IntakeOptions {
  /** Requests in progress past which, while the loop is saturated, connections wait. */
  readonly maxInProgress: number;
  /** Event-loop utilization (0 to 1) from which the loop counts as the limit. */
  readonly loopUtilization: number;
}

/** What the gate reads of the event loop. */
export interface LoopReading {
  readonly value: number;
}

/** The probes: never held, so that Kubernetes hears from a process whose loop is busy. */
const PROBE_PREFIX = '/health/';

/**
 * Pushes back at the socket when the event loop itself is the limit. While
 * the loop is saturated and more than `maxInProgress` requests are in
 * progress, a connection whose response just ended is paused (its next
 * request waits in the kernel's buffer, unread) and queued; it is resumed in
 * arrival order as requests end, and more of them as the bound grows while
 * the loop has room again. A client of a crowd then waits in line at its
 * socket instead of receiving a 503 that it would send again at once, each
 * refusal costing the loop about as much as a small task
 * (docs/adr/0052-a-crowd-waits-in-line.md).
 *
 * Only connections that just carried an answer are held: a new connection's
 * first request (a probe, a new client) is read as ever, and a connection
 * whose request was a probe is never held.
 */
/** Marks a connection resumed whose next request has not been read yet. */
const RESUMED = Symbol('resumed');
type GatedSocket = Socket & { [RESUMED]?: boolean };

/** How often held connections are looked at even when no request ends. */
const TICK_MS = 100;
/**
 * Per tick while the loop has room and connections wait, the bound on requests in progress
 * grows by this factor, and shrinks by its inverse while the loop is saturated (down to
 * `maxInProgress`): held connections come back a share at a time. Resumed all at once, a
 * crowd's thousands made one turn of the loop that read them all, and the probes waited
 * seconds behind it (docs/adr/0057-a-crowds-connections-stay.md).
 */
const BOUND_STEP = 1.25;

export class IntakeGate {
  private inProgress = 0;
  /** The bound on requests in progress now: `maxInProgress`, or more while the loop has room. */
  private bound: number;
  /** Connections resumed whose next request is still to come: they count as in progress. */
  private resuming = 0;
  private readonly held: GatedSocket[] = [];
  private heldHead = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Connections held so far. */
  heldTotal = 0;

  private readonly ended = (() => {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the listener's own `this` is the response
    const gate = this;
    return function (this: ServerResponse): void {
      gate.inProgress -= 1;
      // The response has let go of its socket by now; the request keeps it. A connection
      // whose response said `Connection: close` has no next request to hold.
      const socket = this.req.socket;
      if (this.shouldKeepAlive && !socket.destroyed && gate.holds(this.req)) gate.hold(socket);
      else gate.release();
    };
  })();

  constructor(
    private readonly options: IntakeOptions,
    private readonly loop: LoopReading,
  ) {
    this.bound = options.maxInProgress;
  }

  /** Counts the server's requests from now on. */
  bind(server: Server): void {
    server.on('request', (request: IncomingMessage, response: ServerResponse) =>
      this.begin(request, response),
    );
    // A resumed connection whose client left sends nothing: its place is given back here,
    // and held connections are resumed once the loop has room, even if no request ends.
    this.timer = setInterval(() => {
      this.resuming = 0;
      this.adjustBound();
      this.release();
    }, TICK_MS);
    this.timer.unref();
    server.once('close', () => clearInterval(this.timer));
  }

  /** Requests in progress: read, not yet answered. */
  get requestsInProgress(): number {
    return this.inProgress;
  }

  /** Connections waiting, unread, for their turn. */
  get connectionsHeld(): number {
    return this.held.length - this.heldHead;
  }

  begin(request: IncomingMessage, response: ServerResponse): void {
    this.inProgress += 1;
    const socket = request.socket as GatedSocket;
    if (socket[RESUMED] === true) {
      socket[RESUMED] = false;
      if (this.resuming > 0) this.resuming -= 1;
    }
    // One listener shared by every response: no closure per request.
    response.once('close', this.ended);
  }

  private loopSaturated(): boolean {
    return this.loop.value >= this.options.loopUtilization;
  }

  private full(): boolean {
    return this.inProgress + this.resuming >= this.bound;
  }

  private adjustBound(): void {
    const base = this.options.maxInProgress;
    if (this.loopSaturated()) this.bound = Math.max(base, Math.floor(this.bound / BOUND_STEP));
    else if (this.connectionsHeld > 0) this.bound = Math.ceil(this.bound * BOUND_STEP);
    else this.bound = base;
  }

  private holds(request: IncomingMessage): boolean {
    return (
      (this.connectionsHeld > 0 || (this.full() && this.loopSaturated())) &&
      !(request.url ?? '').startsWith(PROBE_PREFIX)
    );
  }

  private hold(socket: GatedSocket): void {
    socket.pause();
    this.held.push(socket);
    this.heldTotal += 1;
    this.release();
  }

  /** Resumes held connections in arrival order while the requests in progress leave room. */
  private release(): void {
    while (this.heldHead < this.held.length && !this.full()) {
      const socket = this.held[this.heldHead]!;
      this.heldHead += 1;
      if (socket.destroyed) continue;
      socket[RESUMED] = true;
      this.resuming += 1;
      socket.resume();
    }
    if (this.heldHead === this.held.length) {
      this.held.length = 0;
      this.heldHead = 0;
    } else if (this.heldHead > 1024 && this.heldHead * 2 > this.held.length) {
      this.held.splice(0, this.heldHead);
      this.heldHead = 0;
    }
  }
}
