import { ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { AppModule } from '../app.module';
import { ProblemDetailsFilter } from '../common/problem-details.filter';
import { VALIDATOR_OPTIONS, validationError } from '../common/validation';
import type { AppConfig } from '../config/app-config';
import { ShutdownService } from '../lifecycle/shutdown.service';
import { TaskRegistry } from '../workers/task-registry';
import { registerBodyParsers } from './body-parsers';
import { setupOpenApi } from './openapi';
import { rawBodyTask } from './raw-body-routes';
import { registerRequestContext, requestId } from './request-context';

/**
 * Builds the Nest application on Fastify with corepool's HTTP behaviour:
 * problem+json errors, strict validation, request ids, body limits and raw
 * bodies for binary tasks. Threads are warm when this resolves (`init`).
 * main.ts and the end-to-end tests both start the service through here.
 */
export async function createApp(config: AppConfig): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: config.http.bodyLimitBytes,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    requestIdHeader: false,
    genReqId: requestId,
    // Nest's logger (pino) logs requests; Fastify's own would log them twice.
    logger: false,
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    bodyParser: false,
    bufferLogs: true,
  });
  app.useLogger(app.get(Logger));
  app.useGlobalFilters(new ProblemDetailsFilter());
  app.useGlobalPipes(
    new ValidationPipe({
      ...VALIDATOR_OPTIONS,
      transform: true,
      exceptionFactory: validationError,
    }),
  );

  const fastify = app.getHttpAdapter().getInstance();
  const registry = app.get(TaskRegistry);
  registerRequestContext(fastify);
  app.get(ShutdownService).attach(fastify);
  registerBodyParsers(fastify, {
    jsonLimitBytes: config.http.bodyLimitBytes,
    binaryLimitBytes: config.http.binaryBodyLimitBytes,
    rawContentTypes: registry.list().flatMap((task) => task.binary?.contentTypes ?? []),
    rawBodyLimit: (request) => {
      const task = rawBodyTask(request, registry);
      if (task === undefined) return undefined;
      const taskLimit = task.binary?.maxBodyBytes ?? Infinity;
      return Math.min(taskLimit, config.http.binaryBodyLimitBytes);
    },
  });
  setupOpenApi(app);
  await app.init();
  return app;
}
