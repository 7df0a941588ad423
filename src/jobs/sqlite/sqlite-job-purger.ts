import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { ThrottledWarning } from '../../common/throttled-warning';
import { AppConfig } from '../../config/app-config';
import { StoreWriter } from './store-writer';

/** Jobs deleted per statement: few, so that each batch holds the write lock briefly (ADR 0012). */
const PURGE_BATCH = 200;
/** Batches per purge, so one purge never runs long; the next one does the rest. */
const MAX_BATCHES = 50;
/** Free pages returned to the file system per purge (4 KiB each). */
const VACUUM_PAGES = 2000;

/**
 * Deletes jobs past their retention (`JOBS_RESULT_TTL_SECONDS`) every
 * `JOBS_PURGE_INTERVAL_MS`, in small batches with the event loop free in
 * between (each batch is a call of the group commit, `group-commit.ts`,
 * on the writer thread), then returns free pages (`incremental_vacuum`), so the file's size
 * follows what is stored (the WAL is kept short by `wal-checkpointer.ts`, off
 * the event loop). Every process runs it;
 * concurrent purges only find less to do.
 */
@Injectable()
export class SqliteJobPurger implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(SqliteJobPurger.name);
  private readonly warning = new ThrottledWarning(this.logger);
  private timer: NodeJS.Timeout | undefined;
  private purging = false;

  constructor(
    private readonly writer: StoreWriter,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.purge(), this.config.jobs.purgeIntervalMs).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Resolves with how many jobs were deleted. */
  async purge(): Promise<number> {
    if (this.purging) return 0;
    this.purging = true;
    let deleted = 0;
    try {
      for (let batch = 0; batch < MAX_BATCHES; batch++) {
        const count = await this.writer.call('purgeExpired', [PURGE_BATCH]);
        deleted += count;
        if (count < PURGE_BATCH) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
      await this.writer.call('compact', [VACUUM_PAGES]);
    } catch (error) {
      this.warning.warn(`SQLite purge: ${(error as Error).message}`);
    } finally {
      this.purging = false;
    }
    return deleted;
  }
}
