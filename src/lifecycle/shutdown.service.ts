import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { WorkerPoolService } from '../workers/worker-pool.service';
import { ConnectionTracker } from './connection-tracker';
import { ExitCode } from './exit-codes';

/**
 * - `serving`: normal operation.
 * - `stopping`: a signal arrived; readiness fails, requests are still served (`SHUTDOWN_DELAY_MS`).
 * - `draining`: the listener is closed; in-flight requests and tasks finish.
 * - `closed`: drained (or out of budget); the process is about to exit.
 */
export type LifecyclePhase = 'serving' | 'stopping' | 'draining' | 'closed';

/** After the budget, cancelled tasks answer within this time (503 SHUTTING_DOWN) before sockets are cut. */
const CANCELLED_ANSWER_GRACE_MS = 1_000;

/**
 * The graceful shutdown of one HTTP process, as docs/operations.md's numbered steps
 * describe it: fail readiness and keep serving for `SHUTDOWN_DELAY_MS`, stop
 * accepting, let in-flight requests and their tasks finish, close the pool —
 * all within `SHUTDOWN_TIMEOUT_MS`, after which what is left is cancelled.
 */
@Injectable()
export class ShutdownService {
  private readonly logger = new Logger(ShutdownService.name);
  private readonly connections = new ConnectionTracker();
  private current: LifecyclePhase = 'serving';
  private server: Server | undefined;
  private drained: Promise<ExitCode> | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly pool: WorkerPoolService,
  ) {}

  get phase(): LifecyclePhase {
    return this.current;
  }

  /** The server whose listener the drain closes and whose connections it cuts last. */
  bind(server: Server): void {
    this.server = server;
  }

  /**
   * Counts a request in; false when it must be refused with SHUTTING_DOWN:
   * while draining, requests on already-used connections are refused, while
   * the first request of a connection accepted just before the listener
   * closed is still served.
   */
  admits(request: IncomingMessage, response: ServerResponse): boolean {
    const first = this.connections.begin(request, response);
    return this.current === 'serving' || this.current === 'stopping' || first;
  }

  /** While draining, every response asks its client to close the connection. */
  get closingConnections(): boolean {
    return this.current === 'draining' || this.current === 'closed';
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

    // 2. Stop accepting: no new connections; idle keep-alive connections close.
    const deadline = performance.now() + timeoutMs;
    const remaining = () => Math.max(0, deadline - performance.now());
    this.current = 'draining';
    this.stopListening();
    this.connections.closeIdle();
    this.logger.log(
      `Draining ${this.connections.inFlight} requests within ${timeoutMs} ms (SHUTDOWN_TIMEOUT_MS)`,
    );

    // 3. In-flight requests finish, with the tasks they queued in the pool.
    const requestsFinished = await this.connections.whenIdle(remaining());

    // 4. The pool closes; past the budget it cancels what is left with SHUTTING_DOWN.
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
   * request has not been read yet; that request is owed an answer. Idle
   * keep-alive connections are closed by `closeIdle()` instead.
   */
  private stopListening(): void {
    const { server } = this;
    if (server?.listening === true) NetServer.prototype.close.call(server);
  }
}
