import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { Pool } from '@corepool/core';
import type { ComputeModuleOptions } from './compute-module-options';
import { COMPUTE_MODULE_OPTIONS } from './compute.module-definition';

/**
 * The pool, injectable: `@corepool/core`'s `Pool` whose threads start with
 * the module and which drains when the application shuts down (Nest calls
 * `onApplicationShutdown` once `enableShutdownHooks()` is on, or on
 * `app.close()`). Everything else is the core's: `run`, `stats`, `close`.
 */
@Injectable()
export class WorkerPoolService extends Pool implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(COMPUTE_MODULE_OPTIONS) options: ComputeModuleOptions) {
    super({ ...options, logger: options.logger ?? new Logger(WorkerPoolService.name) });
  }

  async onModuleInit(): Promise<void> {
    await this.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}
