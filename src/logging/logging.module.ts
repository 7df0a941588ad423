import { Module, type DynamicModule } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';

/**
 * Nest's logger (and `PinoLogger` for anyone who injects it) writes through
 * the process's root pino logger, the one Fastify's request loggers derive
 * from. Request logging is Fastify's own (see `AccessLog`), so nestjs-pino
 * installs no middleware (`useExisting`, no routes): pino-http's per-request
 * logger and the AsyncLocalStorage context that binds it cost more than the
 * rest of a small request (docs/adr/0004-request-ids-without-async-local-storage.md).
 * pino-http stays a dependency all the same: nestjs-pino names it as a peer, requires it
 * as it loads, and makes its root logger by passing `root` through `pinoHttp()` once, at
 * start. Declaring it pins the version npm would otherwise pick for the peer; no request
 * goes through it.
 * A line about one request names it with `reqId`, taken from the request
 * (`request.log` or the id).
 */
@Module({})
export class LoggingModule {
  static forRoot(root: Logger): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({ pinoHttp: { logger: root }, useExisting: true, forRoutes: [] }),
      ],
    };
  }
}
