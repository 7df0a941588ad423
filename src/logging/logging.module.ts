import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { AppConfig } from '../config/app-config';

/** Routes whose success is too frequent to log (probes and scrapes every few seconds). */
const QUIET_ROUTES = new Set(['/health/live', '/health/ready', '/health', '/metrics']);

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
        pinoHttp: {
          level: config.log.level,
          transport: config.log.pretty
            ? {
                target: 'pino-pretty',
                options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l' },
              }
            : undefined,
          autoLogging: {
            ignore: (request) => QUIET_ROUTES.has(request.url?.split('?')[0] ?? ''),
          },
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
