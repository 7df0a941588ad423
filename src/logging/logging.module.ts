import { Module, RequestMethod } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { AppConfig } from '../config/app-config';

/**
 * Routes that get no request logger at all: probes and scrapes come every few
 * seconds and log nothing of their own, and pino-http's per-request work
 * (child logger, async context, response hooks) was most of what a probe cost.
 */
const UNLOGGED_ROUTES = ['health', 'health/live', 'health/ready', 'metrics'].map((path) => ({
  path,
  method: RequestMethod.ALL,
}));

/**
 * pino through nestjs-pino: JSON lines in production, pretty lines on a
 * developer's terminal. pino-http binds the request id to every line a request
 * logs, through async context: nothing per-request lives in module state.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        exclude: UNLOGGED_ROUTES,
        pinoHttp: {
          level: config.log.level,
          transport: config.log.pretty
            ? {
                target: 'pino-pretty',
                options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l' },
              }
            : undefined,
          customLogLevel: (_request, response, error) =>
            error !== undefined || response.statusCode >= 500
              ? 'error'
              : response.statusCode >= 400
                ? 'warn'
                : 'info',
          redact: ['req.headers.authorization', 'req.headers.cookie'],
          quietReqLogger: true,
        },
      }),
    }),
  ],
})
export class LoggingModule {}
