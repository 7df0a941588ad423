import { ConfigurableModuleBuilder, type Provider } from '@nestjs/common';
import { APP_FILTER, HttpAdapterHost } from '@nestjs/core';
import type { ComputeModuleExtras, ComputeModuleOptions } from './compute-module-options';
import { CorepoolExceptionFilter } from './corepool-exception.filter';

/** The injection token of the module's options (`ComputeModuleOptions`). */
export const COMPUTE_MODULE_OPTIONS = Symbol('COMPUTE_MODULE_OPTIONS');

/** The pool's errors answered over HTTP, app-wide, with the module's `errorStatus`. */
const exceptionFilter: Provider = {
  provide: APP_FILTER,
  inject: [HttpAdapterHost, COMPUTE_MODULE_OPTIONS],
  useFactory: (adapterHost: HttpAdapterHost, options: ComputeModuleOptions) =>
    new CorepoolExceptionFilter(adapterHost, options.errorStatus),
};

/** `forRoot` / `forRootAsync` as Nest's own configurable modules make them, with the extras. */
export const { ConfigurableModuleClass, OPTIONS_TYPE, ASYNC_OPTIONS_TYPE } =
  new ConfigurableModuleBuilder<ComputeModuleOptions>({
    optionsInjectionToken: COMPUTE_MODULE_OPTIONS,
  })
    .setClassMethodName('forRoot')
    .setExtras<Required<ComputeModuleExtras>>(
      { isGlobal: true, httpErrors: true },
      (definition, extras) => ({
        ...definition,
        global: extras.isGlobal,
        providers: [
          ...(definition.providers ?? []),
          ...(extras.httpErrors ? [exceptionFilter] : []),
        ],
      }),
    )
    .build();
