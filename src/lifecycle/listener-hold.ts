import type { Server } from 'node:http';
import { Server as NetServer, type AddressInfo } from 'node:net';

/** Where a failed re-listen is reported; it is tried again after `RETRY_MS`. */
type OnError = (error: Error) => void;

/** A listener that could not be opened again is tried again after this long. */
const RETRY_MS = 1_000;

/**
 * Stops a cluster process accepting new connections for a while, then
 * accepts again (ADR 0018). With the kernel dealing connections
 * (`CLUSTER_SCHEDULING_POLICY=kernel`) any process may win a connection, the
 * busy one as often as the idle one, so connections asked to leave a process
 * may come straight back; while it holds, only the other processes accept,
 * and those connections land there.
 *
 * The listener is closed with net.Server#close, which leaves the open
 * connections alone (http.Server#close would close idle ones), and opened
 * again on the same address: in a cluster process that asks the primary for
 * the same shared socket, which the other processes keep listening on.
 */
export class ListenerHold {
  private address: { readonly port: number; readonly host: string } | undefined;
  /**
   * `reopening`: a listen is on its way (in a cluster process, a round trip to the primary).
   * `stopped`: the server is being closed for good; it never listens again.
   */
  private state: 'open' | 'held' | 'reopening' | 'stopped' = 'open';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly server: Server,
    /** False once the drain has begun: then the listener stays closed. */
    private readonly mayListen: () => boolean,
    private readonly onError: OnError,
  ) {}

  /** Whether the listener is closed by a hold (not by the drain). */
  get holding(): boolean {
    return this.state === 'held' || this.state === 'reopening';
  }

  /** Stops accepting until `resume()`, or `maxMs` from now at the latest. */
  hold(maxMs: number): void {
    if (!this.mayListen() || this.state === 'stopped') return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.resume(), maxMs).unref();
    // While reopening, the listen's callback sees the timer and closes again.
    if (this.state === 'open' && this.server.listening) this.close();
  }

  /** Accepts again (no-op unless held, or once the drain has begun). */
  resume(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const { server, address } = this;
    if (this.state !== 'held' || address === undefined || !this.mayListen()) return;
    this.state = 'reopening';
    const failed = (error: Error) => {
      if (this.state === 'stopped') return;
      this.state = 'held';
      this.onError(error);
      this.timer = setTimeout(() => this.resume(), RETRY_MS).unref();
    };
    server.once('error', failed);
    server.listen(address, () => {
      server.off('error', failed);
      if (this.state === 'stopped') {
        // Stopped while the listen was on its way.
        NetServer.prototype.close.call(server);
        return;
      }
      this.state = 'open';
      // A hold, or the drain, that came while the listen was on its way.
      if (this.timer !== undefined || !this.mayListen()) this.close();
    });
  }

  /**
   * Ends any hold for good, before the server is closed: a hold's timer would
   * otherwise open the listener of a closed server again when it runs out
   * (and keep its process alive).
   */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.state = 'stopped';
  }

  private close(): void {
    const { port, address } = this.server.address() as AddressInfo;
    this.address = { port, host: address };
    this.state = 'held';
    NetServer.prototype.close.call(this.server);
  }
}
