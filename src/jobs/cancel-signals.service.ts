import { ThrottledWarning } from '../common/throttled-warning';
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config';
import { cancelChannel, cancelKey, tombstoneKey } from './bull-jobs.constants';
import { producerOptions, redisOptions } from './redis-options';

/** How long the start waits for Redis before it goes on without it. */
const FIRST_CONNECT_WAIT_MS = 2000;

/**
 * Cancellation across replicas. `DELETE /api/jobs/:id` may reach any replica,
 * while the job runs on another: the request is a Redis key (with a TTL, so a
 * replica that starts the job later still sees it) plus a pub/sub message, on
 * which the replica running the job aborts it (its thread is stopped).
 */
@Injectable()
export class CancelSignals implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(CancelSignals.name);
  private readonly running = new Map<string, AbortController>();
  private readonly prefix: string;
  private readonly commands: Redis;
  private readonly subscriber: Redis;
  private readonly redisWarning = new ThrottledWarning(this.logger);

  constructor(private readonly config: AppConfig) {
    const url = config.jobs.redisUrl as string;
    this.prefix = config.jobs.queuePrefix;
    this.commands = new Redis({ ...producerOptions(url), lazyConnect: true });
    this.subscriber = new Redis({ ...redisOptions(url), lazyConnect: true });
    for (const client of [this.commands, this.subscriber]) {
      client.on('error', (error: Error) => this.logError(error));
    }
    this.subscriber.on('message', (_channel: string, id: string) => this.running.get(id)?.abort());
  }

  /** Waits a moment for the first connection; the service starts (answering QUEUE_UNAVAILABLE) while Redis is away. */
  async onModuleInit(): Promise<void> {
    const connected = this.commands.connect().catch((error: Error) => this.logError(error));
    // ioredis re-subscribes by itself after a reconnect.
    this.subscriber
      .connect()
      .then(() => this.subscriber.subscribe(cancelChannel(this.prefix)))
      .catch((error: Error) => this.logError(error));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      connected,
      new Promise((resolve) => {
        timer = setTimeout(resolve, FIRST_CONNECT_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
  }

  onModuleDestroy(): void {
    this.commands.disconnect();
    this.subscriber.disconnect();
  }

  /** Asks whichever replica runs (or will run) the job to stop it. */
  async request(id: string): Promise<void> {
    await this.commands.set(
      cancelKey(this.prefix, id),
      '1',
      'EX',
      this.config.jobs.resultTtlSeconds,
    );
    await this.commands.publish(cancelChannel(this.prefix), id);
  }

  /** A queued job that was cancelled is removed; this record (with the result TTL) answers GET. */
  async writeTombstone(id: string, view: string): Promise<void> {
    const { queuePrefix, resultTtlSeconds } = this.config.jobs;
    await this.commands.set(tombstoneKey(queuePrefix, id), view, 'EX', resultTtlSeconds);
  }

  readTombstone(id: string): Promise<string | null> {
    return this.commands.get(tombstoneKey(this.prefix, id));
  }

  /** True when a cancel was requested; false too when Redis cannot say (the run goes ahead). */
  async isRequested(id: string): Promise<boolean> {
    try {
      return (await this.commands.exists(cancelKey(this.prefix, id))) === 1;
    } catch {
      return false;
    }
  }

  /**
   * True while the command connection is up. Checked before every API call
   * to Redis: while Redis is away a call fails at once (QUEUE_UNAVAILABLE)
   * instead of waiting for a connection that BullMQ's queue would wait for.
   */
  get connected(): boolean {
    return this.commands.status === 'ready';
  }

  /** The command connection (fails fast while Redis is away), for the job index and byte counter. */
  get redis(): Redis {
    return this.commands;
  }

  /** Registers a run on this replica; the returned function unregisters it. */
  watch(id: string, controller: AbortController): () => void {
    this.running.set(id, controller);
    return () => this.running.delete(id);
  }

  private logError(error: Error): void {
    this.redisWarning.warn(`Redis: ${error.message}`);
  }
}
