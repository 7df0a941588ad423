import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { type BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { WorkerPoolService } from '@corepool/nestjs';
import { afterPoll, ConnectionTracker } from './connection-tracker';
import { ExitCode } from './exit-codes';
import { ListenerHold } from './listener-hold';
import type { MakeRoomShare } from '../cluster/cluster-messages';

/**
 * - `serving`: normal operation.
 * - `stopping`: a signal arrived; readiness fails, requests are still served (`SHUTDOWN_DELAY_MS`).
 * - `draining`: the listener is closed; in-flight requests and tasks finish.
 * - `closed`: drained (or out of budget); the process is about to exit.
 */
export type LifecyclePhase = 'serving' | 'stopping' | 'draining' | 'closed';

/** How often connections are checked for silence (`HTTP_CONNECTION_TIMEOUT_MS`): the timeout's precision. */
const SILENCE_CHECK_MS = 1_000;

/** After the budget, cancelled tasks answer within this time (503 SHUTTING_DOWN) before sockets are cut. */
const CANCELLED_ANSWER_GRACE_MS = 1_000;

/**
 * While draining, a connection with no request in flight is closed once it has
 * been unused this long, not at once: a keep-alive client that got a response
 * a moment ago may be writing its next request on it right now, and closing
 * then resets that request. A client sending continuously never leaves a
 * connection unused this long, so its connections close the race-free way,
 * after a response that says `Connection: close` (docs/lifecycle.md).
 */
export const IDLE_SETTLE_MS = 500;

/**
 * A move for waiting tasks accepts again this long after its last moved
 * request was answered: its client reconnects at once, and another process,
 * whose event loop waits on its tasks, accepts within a millisecond.
 */
const RECONNECT_GRACE_MS = 200;

/**
 * The graceful shutdown of one HTTP process, as docs/operations.md's numbered steps
 * describe it: fail readiness and keep serving for `SHUTDOWN_DELAY_MS`, stop
 * accepting, let in-flight requests and their tasks finish, close the pool —
 * all within `SHUTDOWN_TIMEOUT_MS`, after which what is left is cancelled.
 */
@Injectable()
export class ShutdownService implements BeforeApplicationShutdown {
  private readonly logger = new Logger(ShutdownService.name);
  private readonly connections = new ConnectionTracker();
  private current: LifecyclePhase = 'serving';
  private server: Server | undefined;
  private hold: ListenerHold | undefined;
  private drained: Promise<ExitCode> | undefined;
  /** Counts the moves, so that a task move's release never ends a later hold. */
  private moves = 0;
  /** The current move is a task move: accept again once its requests were answered. */
  private releaseWhenMoved = false;

  constructor(
    private readonly config: AppConfig,
    private readonly pool: WorkerPoolService,
  ) {}

  get phase(): LifecyclePhase {
    return this.current;
  }

  /**
   * The server whose listener the drain closes and whose connections it tracks
   * and closes, those silent for `HTTP_CONNECTION_TIMEOUT_MS` included.
   */
  bind(server: Server): void {
    this.server = server;
    server.on('connection', (socket: Socket) => this.connections.opened(socket));
    const silentMs = this.config.http.connectionTimeoutMs;
    if (silentMs > 0) {
      const check = setInterval(() => this.connections.closeSilent(silentMs), SILENCE_CHECK_MS);
      check.unref();
      server.once('close', () => clearInterval(check));
    }
    this.hold = new ListenerHold(
      server,
      () => this.current === 'serving' || this.current === 'stopping',
      (error) => this.logger.error(`Could not accept connections again: ${error.message}`),
    );
  }

  /**
   * Makes room for a process that has just started (the primary asks, ADR
   * 0018): stops accepting for at most `maxMs`, and the next responses, as
   * many as `fraction` of its connections, close their connections. Their
   * clients reconnect, and since this process does not accept, the new one
   * gets them.
   *
   * A task move (`of: 'requests'`, ADR 0027) moves that share of the
   * requests in flight and accepts again once they were answered: held
   * longer, every client's new connection would go elsewhere too, and a
   * client pool opening its connections meanwhile would pile them all on
   * the other processes.
   */
  makeRoom(maxMs: number, fraction: number, of: MakeRoomShare = 'connections'): void {
    if (this.current !== 'serving' || this.hold === undefined) return;
    this.hold.hold(maxMs);
    const moving = this.connections.shed(fraction, of);
    this.moves += 1;
    this.releaseWhenMoved = of === 'requests';
    if (this.releaseWhenMoved && moving === 0) this.hold.resume();
    this.logger.log(
      this.releaseWhenMoved
        ? `Moving connections: tasks wait here; not accepting until ${moving} connections moved (at most ${maxMs} ms)`
        : `Making room for a new process: not accepting for up to ${maxMs} ms; ${moving} connections move`,
    );
  }

  /** Accepts again now, ending any hold: the process it made room for has died. */
  acceptAgain(): void {
    if (this.hold?.holding !== true) return;
    this.logger.log('Accepting again: a process died while this one held its listener');
    this.hold.resume();
  }

  /**
   * Counts a request in; false when it must be refused with SHUTTING_DOWN,
   * which happens only once the drain's budget has run out. While draining, a
   * request on a kept-alive connection is served (its response closes the
   * connection): the client sent it before it could know, and refusing it
   * would lose it.
   */
  admits(request: IncomingMessage, response: ServerResponse): boolean {
    this.connections.begin(request, response);
    return this.current !== 'closed';
  }

  /**
   * Whether this response must close its connection: while draining, every
   * one does; otherwise one whose connection is older than
   * `HTTP_MAX_CONNECTION_AGE_MS`, or one `makeRoom` asked to move, so that
   * long-lived connections are spread again over the processes (a respawned
   * one gets its share).
   */
  closesConnection(request: IncomingMessage): boolean {
    if (this.current === 'draining' || this.current === 'closed') return true;
    if (this.connections.takeClose()) {
      if (this.releaseWhenMoved && this.connections.closingLeft === 0) this.releaseSoon();
      return true;
    }
    // Not while the listener holds: every connection closed now can only reconnect to
    // another process, so the age bound would move more than `makeRoom` asked, all of
    // them when they were opened together (ADR 0027). The next response after the hold.
    if (this.hold?.holding === true) return false;
    const { maxConnectionAgeMs } = this.config.http;
    return maxConnectionAgeMs > 0 && this.connections.outlived(request.socket, maxConnectionAgeMs);
  }

  /** A task move's last request is answered: accept again once its client had time to reconnect. */
  private releaseSoon(): void {
    this.releaseWhenMoved = false;
    const move = this.moves;
    setTimeout(() => {
      if (move === this.moves) this.hold?.resume();
    }, RECONNECT_GRACE_MS).unref();
  }

  /** Nest closes the HTTP server next: a hold must not open its listener again later. */
  beforeApplicationShutdown(): void {
    this.hold?.stop();
  }

  /** Requests answered since the last call, for the primary's view of the shares (ADR 0018). */
  takeAnswered(): number {
    return this.connections.takeAnswered();
  }

  /** Runs the shutdown once (later calls get the same result); resolves with the exit code. */
  drain(reason: string): Promise<ExitCode> {
    this.drained ??= this.run(reason);
    return this.drained;
  }

  private async run(reason: string): Promise<ExitCode> {
    const { delayMs, timeoutMs } = this.config.shutdown;
    // 1. Readiness fails at once; keep serving while load balancers notice.
    this.current = 'stopping';
    this.logger.log(`${reason}: readiness fails now; serving ${delayMs} ms more, then draining`);
    if (delayMs > 0) await sleep(delayMs);

    // 2. Stop accepting: no new connections; every response now says `Connection: close`.
    const deadline = performance.now() + timeoutMs;
    const remaining = () => Math.max(0, deadline - performance.now());
    this.current = 'draining';
    // Not in the signal's own turn: connections the kernel completed meanwhile are accepted
    // first, and will be answered with `Connection: close`. In a cluster, one left in the
    // shared socket's queue once every process has closed its listener is reset by the kernel
    // when the primary closes the socket (docs/lifecycle.md).
    await afterPoll();
    this.stopListening();
    this.logger.log(
      `Draining ${this.connections.inFlight} requests on ${this.connections.openConnections} connections within ${timeoutMs} ms (SHUTDOWN_TIMEOUT_MS)`,
    );

    // 3. In-flight requests finish, with the tasks they queued in the pool; each
    // connection closes after its next response, or once it has settled idle.
    const connectionsClosed = await this.connections.whenClosed(IDLE_SETTLE_MS, remaining());
    // Connections left idle at the budget's end cost nothing: every request was answered.
    const requestsFinished = connectionsClosed || this.connections.inFlight === 0;

    // 4. The pool closes; past the budget it cancels what is left with SHUTTING_DOWN,
    // and a request that still arrives is refused with it.
    if (!requestsFinished) this.current = 'closed';
    const poolDrained = await this.pool.close(requestsFinished ? remaining() : 0);
    if (!requestsFinished) await this.connections.whenIdle(CANCELLED_ANSWER_GRACE_MS);
    this.server?.closeAllConnections();
    this.current = 'closed';
    if (requestsFinished && poolDrained) {
      this.logger.log('Drained: every request was answered');
      return ExitCode.OK;
    }
    this.logger.warn(
      `Shutdown budget of ${timeoutMs} ms ran out; unfinished requests were cancelled (exit ${ExitCode.SHUTDOWN_TIMEOUT})`,
    );
    return ExitCode.SHUTDOWN_TIMEOUT;
  }

  /**
   * Closes the listener only. http.Server#close would also close idle
   * connections at once, including one accepted a moment ago whose first
   * request has not been read yet, or a kept-alive one whose next request is
   * on its way; those requests are owed an answer. Idle connections are
   * closed once they have settled instead.
   */
  private stopListening(): void {
    const { server } = this;
    if (server?.listening === true) NetServer.prototype.close.call(server);
  }
}
