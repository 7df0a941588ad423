import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { Type } from '../plain-to-instance';
import { autoOrNumber, unlessAuto } from './conversions';

/** Asynchronous jobs: the store (SQLite or BullMQ on Redis), its limits, events (docs/jobs.md). */
export class JobsVariables {
  /**
   * Worker threads asynchronous jobs may hold at once, so a batch of jobs never takes the whole
   * pool from synchronous callers. `auto`: all threads but one, at least 1.
   */
  @autoOrNumber()
  @unlessAuto()
  @Min(1)
  @Max(1024)
  @IsInt({ message: 'JOBS_MAX_THREADS must be `auto` or a whole number' })
  JOBS_MAX_THREADS: number | 'auto' = 'auto';

  /**
   * Set: jobs use BullMQ on this Redis. Unset: the SQLite store at `JOBS_SQLITE_PATH`, shared by
   * the processes of this machine.
   */
  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;

  /** BullMQ key prefix: replicas that share a prefix (and a Redis) share one queue. */
  @Matches(/^[\w.:-]{1,64}$/, {
    message: 'JOBS_QUEUE_PREFIX must be 1-64 letters, digits, . : _ -',
  })
  JOBS_QUEUE_PREFIX = 'corepool';

  /**
   * Runs per job (BullMQ): retries after a crash or a saturated pool, and takeovers of a killed
   * replica's job.
   */
  @Type(() => Number)
  @Min(1)
  @Max(100)
  @IsInt()
  JOBS_ATTEMPTS = 3;

  /** First retry delay, doubling each time. */
  @Type(() => Number)
  @Min(0)
  @Max(3_600_000)
  @IsInt()
  JOBS_BACKOFF_MS = 1000;

  /** Finished jobs (result or error) are kept this long. */
  @Type(() => Number)
  @Min(1)
  @Max(30 * 86_400)
  @IsInt()
  JOBS_RESULT_TTL_SECONDS = 3600;

  /** BullMQ lock per running job; a replica silent this long (killed) has its job taken over. */
  @Type(() => Number)
  @Min(1000)
  @Max(600_000)
  @IsInt()
  JOBS_LOCK_DURATION_MS = 30_000;

  /**
   * SQLite job store (without `REDIS_URL`): its file, relative to the working directory. Every
   * process of the service opens the same file; the Dockerfile and the Kubernetes manifests mount a
   * volume at `data/`.
   */
  @IsString()
  @Matches(/\S/, { message: 'JOBS_SQLITE_PATH must name a file' })
  JOBS_SQLITE_PATH = 'data/jobs.sqlite';

  /**
   * SQLite job store: how often each process checks that the file it writes is still the one at
   * `JOBS_SQLITE_PATH` (same device and inode) and readable and writable by its mode bits (one
   * `stat` per interval), and how often a process that could not open the store tries again.
   * Every commit is checked as well, before it is acknowledged, so a process that writes refuses
   * from its first commit after a change; this interval bounds how late a process that writes
   * nothing fails readiness, and how soon a file put back is served (docs/jobs.md).
   */
  @Type(() => Number)
  @Min(100)
  @Max(60_000)
  @IsInt()
  JOBS_SQLITE_CHECK_INTERVAL_MS = 1000;

  /**
   * SQLite job store: how often each process looks for jobs to claim, renews its leases and reads
   * cancel requests. A process's own submissions are claimed at once.
   */
  @Type(() => Number)
  @Min(10)
  @Max(60_000)
  @IsInt()
  JOBS_POLL_INTERVAL_MS = 200;

  /**
   * SQLite job store: how often expired jobs are purged (in small batches), free pages returned and
   * the WAL truncated.
   */
  @Type(() => Number)
  @Min(1000)
  @Max(86_400_000)
  @IsInt()
  JOBS_PURGE_INTERVAL_MS = 60_000;

  /**
   * `GET /api/jobs/:id/events`: a comment line this often keeps proxies from closing a quiet
   * stream.
   */
  @Type(() => Number)
  @Min(1000)
  @Max(300_000)
  @IsInt()
  JOBS_EVENTS_HEARTBEAT_MS = 15_000;

  /**
   * `GET /api/jobs/:id/events`: streams one client may hold open on one process; past it: 429
   * `RATE_LIMITED`. The client is its key, token or quota key (its address without authentication).
   */
  @Type(() => Number)
  @Min(1)
  @Max(100_000)
  @IsInt()
  JOBS_EVENTS_MAX_STREAMS_PER_CLIENT = 16;

  /**
   * `GET /api/jobs/:id/events`: streams one process holds open at most, all clients together; past
   * it: 429 `RATE_LIMITED`.
   */
  @Type(() => Number)
  @Min(1)
  @Max(1_000_000)
  @IsInt()
  JOBS_EVENTS_MAX_STREAMS = 1_000;

  /**
   * Jobs kept at most, on either backend. Finished ones make room; when this many are queued or
   * running, a new job gets 503 `JOB_QUEUE_FULL`.
   */
  @Type(() => Number)
  @Min(1)
  @Max(1_000_000)
  @IsInt()
  JOBS_MAX_STORED = 10_000;

  /**
   * Bytes of stored jobs at most (inputs, bodies and results), on either backend, counted as the
   * store holds them: a binary body on Redis as base64 (4/3 of its bytes); past it a new job gets
   * 503 `JOB_QUEUE_FULL`. Redis needs room for this plus BullMQ's own records of each job and of
   * finished ones.
   */
  @Type(() => Number)
  @Min(1_048_576)
  @Max(1_099_511_627_776)
  @IsInt()
  JOBS_MAX_STORED_BYTES = 1_073_741_824;

  /** Largest stored result of a job (as JSON); a larger one fails the job with `TASK_FAILED`. */
  @Type(() => Number)
  @Min(1024)
  @Max(268_435_456)
  @IsInt()
  JOBS_MAX_RESULT_BYTES = 16_777_216;

  /** Raw body limit of a binary job (it waits in SQLite or Redis until it runs). */
  @Type(() => Number)
  @Min(1024)
  @Max(268_435_456)
  @IsInt()
  JOBS_MAX_BODY_BYTES = 16_777_216;

  /**
   * 32 bytes (64 hex digits or base64): jobs submitted with `encrypt` store and return their result
   * AES-256-GCM encrypted.
   */
  @IsOptional()
  @Matches(/^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, {
    message: 'RESULT_ENCRYPTION_KEY must be 32 bytes, as 64 hex digits or 44 base64 characters',
  })
  RESULT_ENCRYPTION_KEY?: string;
}
