import 'reflect-metadata';
import { Transform, Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateIf,
} from 'class-validator';

/** `auto` or a whole number: the string stays `auto`, anything else becomes a number (NaN fails). */
const autoOrNumber = () =>
  Transform(({ value }: { value: unknown }) => (value === 'auto' ? 'auto' : Number(value)));
const isNotAuto = (property: keyof EnvironmentVariables) => (env: EnvironmentVariables) =>
  env[property] !== 'auto';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Validation stops at a variable's first failed rule. Decorators apply
 * bottom-up, so the type check sits nearest the property: `PORT=eighty` is
 * reported as not a number, not as out of range.
 *
 * The raw environment as documented in the README's configuration table.
 * Property initializers are the defaults. Every variable is validated at once,
 * so a bad environment is reported whole, not one variable per restart.
 */
export class EnvironmentVariables {
  @Type(() => Number)
  @Min(0)
  @Max(65535)
  @IsInt()
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  @autoOrNumber()
  @ValidateIf(isNotAuto('CLUSTER_WORKERS'))
  @Min(1)
  @Max(256)
  @IsInt({ message: 'CLUSTER_WORKERS must be `auto` or a whole number' })
  CLUSTER_WORKERS: number | 'auto' = 'auto';

  @autoOrNumber()
  @ValidateIf(isNotAuto('POOL_THREADS'))
  @Min(0)
  @Max(1024)
  @IsInt({ message: 'POOL_THREADS must be `auto` or a whole number' })
  POOL_THREADS: number | 'auto' = 'auto';

  @autoOrNumber()
  @ValidateIf(isNotAuto('POOL_MAX_QUEUE'))
  @Min(0)
  @Max(1_000_000)
  @IsInt({ message: 'POOL_MAX_QUEUE must be `auto` or a whole number' })
  POOL_MAX_QUEUE: number | 'auto' = 'auto';

  @Type(() => Number)
  @Min(1)
  @Max(86_400_000)
  @IsInt()
  TASK_TIMEOUT_MS = 30_000;

  @IsOptional()
  @Type(() => Number)
  @Min(16)
  @Max(65_536)
  @IsInt()
  WORKER_MAX_OLD_GENERATION_MB?: number;

  @Type(() => Number)
  @Min(0)
  @IsInt()
  WORKER_MAX_TASKS = 0;

  @Type(() => Number)
  @Min(0)
  @Max(19)
  @IsInt()
  WORKER_NICE_INCREMENT = 19;

  @Type(() => Number)
  @Min(1024)
  @Max(1_073_741_824)
  @IsInt()
  BODY_LIMIT_BYTES = 1_048_576;

  @Type(() => Number)
  @Min(1024)
  @Max(1_073_741_824)
  @IsInt()
  BINARY_BODY_LIMIT_BYTES = 67_108_864;

  @Type(() => Number)
  @Min(100)
  @Max(3_600_000)
  @IsInt()
  HTTP_HEADERS_TIMEOUT_MS = 10_000;

  @Type(() => Number)
  @Min(100)
  @Max(3_600_000)
  @IsInt()
  HTTP_REQUEST_TIMEOUT_MS = 60_000;

  @Type(() => Number)
  @Min(100)
  @Max(3_600_000)
  @IsInt()
  HTTP_KEEP_ALIVE_TIMEOUT_MS = 72_000;

  @autoOrNumber()
  @ValidateIf(isNotAuto('HTTP_CONNECTION_TIMEOUT_MS'))
  @Min(0)
  @Max(86_400_000)
  @IsInt({ message: 'HTTP_CONNECTION_TIMEOUT_MS must be `auto` or a whole number' })
  HTTP_CONNECTION_TIMEOUT_MS: number | 'auto' = 'auto';

  @Type(() => Number)
  @Min(0.05)
  @Max(1)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  READY_QUEUE_HIGH_WATER = 0.8;

  @Type(() => Number)
  @Min(1)
  @IsInt()
  READY_MAX_EVENT_LOOP_DELAY_MS = 200;

  @Type(() => Number)
  @Min(0)
  @IsInt()
  SHUTDOWN_DELAY_MS = 0;

  @Type(() => Number)
  @Min(100)
  @IsInt()
  SHUTDOWN_TIMEOUT_MS = 25_000;

  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;

  /** BullMQ key prefix: replicas that share a prefix (and a Redis) share one queue. */
  @Matches(/^[\w.:-]{1,64}$/, {
    message: 'JOBS_QUEUE_PREFIX must be 1-64 letters, digits, . : _ -',
  })
  JOBS_QUEUE_PREFIX = 'corepool';

  @Type(() => Number)
  @Min(1)
  @Max(100)
  @IsInt()
  JOBS_ATTEMPTS = 3;

  @Type(() => Number)
  @Min(0)
  @Max(3_600_000)
  @IsInt()
  JOBS_BACKOFF_MS = 1000;

  @Type(() => Number)
  @Min(1)
  @Max(30 * 86_400)
  @IsInt()
  JOBS_RESULT_TTL_SECONDS = 3600;

  @Type(() => Number)
  @Min(1000)
  @Max(600_000)
  @IsInt()
  JOBS_LOCK_DURATION_MS = 30_000;

  @Type(() => Number)
  @Min(1)
  @Max(1_000_000)
  @IsInt()
  JOBS_MAX_STORED = 10_000;

  @Type(() => Number)
  @Min(1024)
  @Max(268_435_456)
  @IsInt()
  JOBS_MAX_BODY_BYTES = 16_777_216;

  @IsOptional()
  @Matches(/^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, {
    message: 'RESULT_ENCRYPTION_KEY must be 32 bytes, as 64 hex digits or 44 base64 characters',
  })
  RESULT_ENCRYPTION_KEY?: string;

  @IsOptional()
  @IsString()
  TASK_MODULES?: string;

  @IsOptional()
  @IsString()
  NODE_ENV?: string;
}
