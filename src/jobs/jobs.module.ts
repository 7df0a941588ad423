import cluster from 'node:cluster';
import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { AppConfig } from '../config/app-config';
import { WorkersModule } from '../workers/workers.module';
import { configuredProcessor } from './bull-job.processor';
import { BullJobQueue } from './bull-job-queue';
import { JOBS_QUEUE } from './bull-jobs.constants';
import { CancelSignals } from './cancel-signals.service';
import { JobExecutor } from './job-executor.service';
import { JobQueue } from './job-queue';
import { JobsController } from './jobs.controller';
import { producerOptions } from './redis-options';
import { SqliteJobPurger } from './sqlite/sqlite-job-purger';
import { SqliteJobQueue } from './sqlite/sqlite-job-queue';
import { SqliteJobRunner } from './sqlite/sqlite-job-runner';
import { SqliteJobStore, type SqliteStoreOptions } from './sqlite/sqlite-job-store';
import { SqliteStoreWatch } from './sqlite/sqlite-store-watch';
import { WriterThreadClient } from './sqlite/writer-thread-client';
import { StoreWriter } from './sqlite/store-writer';

/**
 * Asynchronous jobs. The backend is chosen once, at start: without
 * `REDIS_URL`, SQLite in one file shared by every process of the machine;
 * with it, BullMQ on Redis, shared by every replica that uses the same Redis
 * and `JOBS_QUEUE_PREFIX`. Both implement `JobQueue`.
 */
@Module({})
export class JobsModule {
  static forRoot(config: AppConfig): DynamicModule {
    const { redisUrl } = config.jobs;
    const base = {
      module: JobsModule,
      // Readiness asks the queue whether its store can serve (`src/health/job-store.health.ts`).
      global: true,
      exports: [JobQueue],
      imports: [WorkersModule],
      controllers: [JobsController],
    };
    if (redisUrl === undefined) return { ...base, providers: sqliteProviders() };
    return {
      ...base,
      imports: [WorkersModule, bullQueue(config, redisUrl)],
      providers: [
        JobExecutor,
        CancelSignals,
        { provide: JobQueue, useClass: BullJobQueue },
        configuredProcessor(config),
      ],
    };
  }
}

/** The SQLite backend: this process's reads, its writer thread, the store's watch, runner and purger. */
function sqliteProviders(): Provider[] {
  return [
    JobExecutor,
    // Two connections to the one file: reads here, and the group commit on a thread (ADR 0022).
    {
      provide: SqliteJobStore,
      // Only the whole service's start creates a missing file: the cluster primary, or a
      // process without one. A process the primary forked (a respawn, a reload) never does.
      useFactory: (config: AppConfig) =>
        new SqliteJobStore({ ...storeOptions(config), create: cluster.isPrimary }),
      inject: [AppConfig],
    },
    // The thread opens the store its process's reads opened (read when it starts: they may open
    // one late), or none: it never creates a file. It reports a file lost after a commit.
    {
      provide: StoreWriter,
      useFactory: (config: AppConfig, store: SqliteJobStore, watch: SqliteStoreWatch) =>
        new WriterThreadClient(
          () => ({
            ...storeOptions(config),
            create: false,
            ...('identity' in store.opened ? { storeId: store.opened.identity.storeId } : {}),
          }),
          () => watch.refusal(),
          (finding) => watch.report(finding),
        ),
      inject: [AppConfig, SqliteJobStore, SqliteStoreWatch],
    },
    SqliteStoreWatch,
    SqliteJobRunner,
    SqliteJobPurger,
    { provide: JobQueue, useClass: SqliteJobQueue },
  ];
}

/** The BullMQ queue on Redis; finished jobs go by age, and past the newest `maxStored` of each kind. */
function bullQueue(config: AppConfig, redisUrl: string): DynamicModule {
  const { queuePrefix, attempts, backoffMs, resultTtlSeconds, maxStored } = config.jobs;
  const keep = { age: resultTtlSeconds, count: maxStored };
  return BullModule.registerQueue({
    name: JOBS_QUEUE,
    prefix: queuePrefix,
    connection: producerOptions(redisUrl),
    defaultJobOptions: {
      attempts,
      backoff: { type: 'exponential', delay: backoffMs },
      removeOnComplete: keep,
      removeOnFail: keep,
    },
  });
}

function storeOptions({ jobs }: AppConfig): SqliteStoreOptions {
  return {
    path: jobs.sqlitePath,
    maxStored: jobs.maxStored,
    maxStoredBytes: jobs.maxStoredBytes,
    resultTtlSeconds: jobs.resultTtlSeconds,
    attempts: jobs.attempts,
    backoffMs: jobs.backoffMs,
  };
}
