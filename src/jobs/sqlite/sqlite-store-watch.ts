import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { Errors, type AppError } from '../../common/app-error';
import { AppConfig } from '../../config/app-config';
import type { JobStoreHealth } from '../job-queue';
import { SqliteJobStore } from './sqlite-job-store';
import type { OpenedStore } from './sqlite-store-file';
import { checkStoreFile, type StoreFileFinding, type StoreFileProblem } from './store-file-check';

interface Lost {
  readonly problem: StoreFileProblem | 'not-opened';
  readonly message: string;
  readonly since: string;
}

/**
 * Whether the file this process opened is still the job store at
 * `JOBS_SQLITE_PATH` (`store-file-check.ts`): the writer thread confirms it
 * after every commit and reports a loss at once (`report`), and this watch
 * looks every `JOBS_SQLITE_CHECK_INTERVAL_MS`, for a process that writes
 * nothing and to see the file come back. While it is not, every job call is
 * QUEUE_UNAVAILABLE and readiness fails with the reason; the change is logged
 * once each way. A process that could open no store at its start tries again
 * on the same interval, and serves once it can (ADR 0042).
 */
@Injectable()
export class SqliteStoreWatch implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('SqliteJobStore');
  private lost: Lost | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: SqliteJobStore,
    private readonly config: AppConfig,
  ) {
    const { opened } = store;
    if ('problem' in opened) {
      this.loseOpening(opened.problem);
      return;
    }
    if (opened.orphanedWal !== undefined) {
      this.logger.warn(
        `A write-ahead log without its job store was found; kept as ${opened.orphanedWal}`,
      );
    }
    const { storeId, path } = opened.identity;
    this.logger.log(`Job store ${storeId} ${opened.created ? 'created' : 'opened'} at ${path}`);
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.check(), this.config.jobs.sqliteCheckIntervalMs).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Whether the file at the path is the store this process opened, readable and writable. */
  get available(): boolean {
    return this.lost === undefined;
  }

  /** QUEUE_UNAVAILABLE with the reason while the store is lost; undefined while it is well. */
  refusal(): AppError | undefined {
    return this.lost === undefined
      ? undefined
      : Errors.queueUnavailable(`SQLite job store ${this.lost.problem}: ${this.lost.message}`);
  }

  /** The store as readiness shows it. */
  health(): JobStoreHealth {
    const { opened } = this.store;
    const known =
      'identity' in opened
        ? { storeId: opened.identity.storeId, path: opened.identity.path }
        : { path: this.config.jobs.sqlitePath };
    if (this.lost === undefined) return { up: true, details: { backend: 'sqlite', ...known } };
    return { up: false, details: { backend: 'sqlite', ...known, ...this.lost } };
  }

  /**
   * The writer thread found, after a commit, that the file is no longer the
   * store at its path, and refused that commit's callers: from now on the
   * event loop refuses every call itself, as after the periodic check.
   */
  report(finding: StoreFileFinding): void {
    if (this.lost?.problem === finding.problem) return;
    this.lose(finding, this.heldJobs(finding.problem));
  }

  private check(): void {
    if (!('identity' in this.store.opened)) {
      this.openLate();
      return;
    }
    const finding = checkStoreFile(this.store.opened.identity);
    if (finding === undefined) {
      if (this.lost === undefined) return;
      this.logger.log(
        `Job store ${this.store.opened.identity.storeId} is back: jobs are served again`,
      );
      this.lost = undefined;
      return;
    }
    this.report(finding);
  }

  /**
   * Opens the store that this process could not open when it started (a file
   * being restored, a lock, an I/O error): tried on every check rather than
   * leaving the process without a store until a restart, since readiness
   * failing restarts nothing (docs/jobs.md). It never creates a file.
   */
  private openLate(): void {
    if (!this.store.reopen()) {
      const { opened } = this.store;
      // The reason may change (a lock released, the file still missing): said when it does.
      if ('problem' in opened && !this.lost?.message.startsWith(opened.problem)) {
        this.loseOpening(opened.problem);
      }
      return;
    }
    const opened = this.store.opened as OpenedStore;
    const { storeId, path } = opened.identity;
    this.logger.log(
      `Job store ${storeId} opened at ${path}, after it could not be opened at first: jobs are served`,
    );
    this.lost = undefined;
  }

  private loseOpening(problem: string): void {
    this.lose({
      problem: 'not-opened',
      // Only the service's start makes a store (docs/jobs.md): never one beside a running one's.
      message: `${problem}; a process of a running service never creates one: it opens the store once the file is restored, or restart the service to create an empty store`,
    });
  }

  private lose(lost: Omit<Lost, 'since'>, held = ''): void {
    this.lost = { ...lost, since: new Date().toISOString() };
    this.logger.error(
      `Job store unavailable (${lost.problem}): ${lost.message}${held}. Job submissions answer 503 QUEUE_UNAVAILABLE and readiness fails until it is fixed (docs/operations.md)`,
    );
  }

  /**
   * What the file this process still holds open contains: after a delete or a
   * move, the jobs acknowledged so far live only there, so the operator learns
   * how many, and where to copy them from before the process exits.
   */
  private heldJobs(problem: StoreFileProblem): string {
    if (problem !== 'missing' && problem !== 'replaced') return '';
    try {
      const counts = Object.entries(this.store.counts());
      const total = counts.reduce((sum, [, count]) => sum + count, 0);
      const unfinished = counts
        .filter(([status]) => status === 'queued' || status === 'running')
        .reduce((sum, [, count]) => sum + count, 0);
      return `; the file this process (pid ${process.pid}) still holds open has ${total} jobs (${unfinished} queued or running) that no other process sees, readable under /proc/${process.pid}/fd until it exits`;
    } catch {
      return '';
    }
  }
}
