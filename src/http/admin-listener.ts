import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { clientErrorHandler } from './framework-errors';

/** Node's HTTP limits of the admin listener: the public listener's (config.http). */
export interface AdminListenerOptions {
  readonly port: number;
  readonly host: string;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
}

/**
 * The second listener of `ADMIN_PORT`: its requests go to the same Fastify
 * application as the public ones (same hooks, problem+json, metrics), and the
 * routes decide by their declared surface which listener may serve them
 * (hooks.ts). Under the cluster module every process listens on the port and
 * the primary shares it, as it shares the public one; a scrape reaching any
 * process is answered for the whole cluster (metrics/cluster-scrape.service.ts).
 */
export class AdminListener {
  private readonly server: Server;
  private readonly sockets = new WeakSet<Socket>();

  constructor(
    handler: RequestListener,
    private readonly options: AdminListenerOptions,
  ) {
    this.server = createServer(
      {
        headersTimeout: options.headersTimeoutMs,
        requestTimeout: options.requestTimeoutMs,
        keepAliveTimeout: options.keepAliveTimeoutMs,
      },
      handler,
    );
    this.server.on('connection', (socket: Socket) => this.sockets.add(socket));
    this.server.on('clientError', clientErrorHandler);
  }

  /** True when the request came in on the admin port. */
  carries(request: IncomingMessage): boolean {
    return this.sockets.has(request.socket);
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /** Stops listening and closes its connections (scrapes are short; none is worth waiting for). */
  close(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.server.listening) return resolve();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
