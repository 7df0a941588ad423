import type { PoolOptions } from '@corepool/core';
import type { Registry } from 'prom-client';

/** What `ComputeModule.forRoot` takes: the pool's options (`@corepool/core`) and the module's own. */
export interface ComputeModuleOptions extends PoolOptions {
  /**
   * Readiness (`PoolHealthIndicator`): `progressTimeoutMs`, how long tasks may wait with none
   * finishing before the pool counts as wedged (default: the task timeout plus the cancel grace
   * plus 10 s; 0: never); `queueHighWater`, a share of `maxQueue` past which readiness fails
   * (default: never — busy is not unready).
   */
  readonly health?: { readonly progressTimeoutMs?: number; readonly queueHighWater?: number };
  /**
   * The pool's metrics: registered in prom-client's default registry (the one
   * `@willsoto/nestjs-prometheus` serves) unless `registry` names another; `false`: none.
   */
  readonly metrics?: false | { readonly registry?: Registry; readonly prefix?: string };
  /** The HTTP status of a code, over `DEFAULT_ERROR_STATUS` (`CorepoolExceptionFilter`). */
  readonly errorStatus?: Readonly<Record<string, number>>;
}

/** What `forRoot` and `forRootAsync` take beside the options, fixed when the module is imported. */
export interface ComputeModuleExtras {
  /** The module's providers are visible app-wide. Default true. */
  readonly isGlobal?: boolean;
  /**
   * `CorepoolExceptionFilter` answers the pool's errors over HTTP, app-wide. Default true;
   * false leaves them to the app's own filters.
   */
  readonly httpErrors?: boolean;
}
