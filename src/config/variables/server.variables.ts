import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { Type } from '../plain-to-instance';

/** Nest's and pino's levels: `silent` logs nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The listener, the operator routes (`/metrics`, the detailed `/health`, `/docs`) and logs. */
export class ServerVariables {
  /** Port to listen on. */
  @Type(() => Number)
  @Min(0)
  @Max(65535)
  @IsInt()
  PORT = 3000;

  /**
   * Address to listen on. Loopback by default, so a service started with no set-up (and
   * `AUTH_MODE=none`) is not open to the network; the container image sets `0.0.0.0`.
   */
  @IsString()
  HOST = '127.0.0.1';

  /**
   * Set: `/metrics` and the detailed `/health` are served on this port only (same address as
   * `PORT`), and the public port answers them with 404; it keeps the API and the probes
   * `/health/live` and `/health/ready`. Unset: everything on `PORT`. Must differ from `PORT`.
   */
  @IsOptional()
  @Type(() => Number)
  @Min(1)
  @Max(65535)
  @IsInt()
  ADMIN_PORT?: number;

  /**
   * How long a scrape's collection of every process answers later scrapes too; concurrent scrapes
   * share one collection whatever this is. `0`: every scrape that finds none running collects anew.
   */
  @Type(() => Number)
  @Min(0)
  @Max(60_000)
  @IsInt()
  METRICS_CACHE_MS = 1_000;

  /**
   * Requests per second one client address (an IPv6 client by its subnet) may make to the operator
   * routes (`/metrics`, the detailed `/health`), on whichever port serves them, per process; past
   * it: 429 `RATE_LIMITED`, answered when the client's second is over, so a client that retries at
   * once cannot turn refusals into a flood of their own. `0`: no limit.
   */
  @Type(() => Number)
  @Min(0)
  @Max(1_000_000)
  @IsInt()
  OPERATOR_REQUESTS_PER_SECOND = 10;

  /**
   * How long one gathering of the detailed `/health` answers later requests too; concurrent
   * requests share one gathering whatever this is. `0`: every request that finds none running
   * gathers anew.
   */
  @Type(() => Number)
  @Min(0)
  @Max(60_000)
  @IsInt()
  HEALTH_CACHE_MS = 1_000;

  /**
   * `false`: no Swagger UI at `/docs` and no OpenAPI document at `/docs-json` (404). `true`: both,
   * served from the few Swagger UI files the page needs.
   */
  @IsIn(['true', 'false'])
  DOCS_ENABLED: 'true' | 'false' = 'true';

  /** pino level. */
  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  /** `production` always logs JSON; otherwise logs are readable on a terminal, JSON elsewhere. */
  @IsOptional()
  @IsString()
  NODE_ENV?: string;
}
