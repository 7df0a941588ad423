import cluster from 'node:cluster';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { accessGate } from './auth/access-gate';
import { createAuthenticator } from './auth/create-authenticator';
import { quotaKeyOptions } from './auth/client-key';
import { registerQuotas } from './auth/quotas';
import { directTaskRoutes } from './compute/direct-task-routes';
import { directHealthRoutes } from './health/direct-health-routes';
import type { AppConfig } from './config/app-config';
import { renameWarning } from './config/renamed-variables';
import { clientErrorHandler, frameworkErrorHandler } from './http/framework-errors';
import { AdminListener } from './http/admin-listener';
import { BodyMemoryBudget } from './http/body-memory-budget';
import { LeanFastifyAdapter } from './http/lean-fastify-adapter';
import { registerOperatorRateLimit } from './http/operator-rate-limit';
import { registerHooks } from './http/hooks';
import { setupOpenApi } from './http/openapi';
import { RESPONSE_SCHEMAS } from './openapi-responses';
import { ProblemDetailsFilter } from './http/problem-details.filter';
import { rawBodyTask } from './http/raw-body-routes';
import { requestId, routeProfileOf } from './http/request-context';
import { ShutdownService } from './lifecycle/shutdown.service';
import { AccessLog } from './logging/access-log';
import { IntakeGate } from './http/intake-gate';
import { LoopUtilization } from './http/loop-utilization';
import { fastifyLogger } from './logging/lazy-request-logger';
import { createRootLogger } from './logging/root-logger';
import { HttpMetricsService } from './metrics/http-metrics.service';
import { TaskRegistry } from '@corepool/core';
import { startTracing, stopTracing } from './tracing/tracing';

const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;

/**
 * Builds the Nest application on Fastify with corepool's HTTP behaviour:
 * problem+json errors, request ids, body limits and raw
 * bodies for binary tasks. Threads are warm when this resolves (`init`).
 * main.ts and the end-to-end tests both start the service through here.
 */
export async function createApp(config: AppConfig): Promise<NestFastifyApplication> {
  const logger = createRootLogger(config.log);
  // This process's own SDK, loaded only when configured (ADR 0048): each cluster process exports its spans.
  const tracing = await startTracing(config.tracing, logger);
  // Before anything else: a key file or public key that cannot be read stops the start.
  const authenticator = createAuthenticator(config, logger);
  // A forked process reads the primary's environment, and the primary warned already (ADR 0049).
  if (cluster.isPrimary) {
    for (const renamed of config.renamedVariables) {
      logger.warn({ variable: renamed.old, replacement: renamed.current }, renameWarning(renamed));
    }
  }
  const adapter = new LeanFastifyAdapter({
    bodyLimit: config.http.bodyLimitBytes,
    // No Nest middleware: without @fastify/middie, no request runs its hook.
    skipMiddie: true,
    // `request.ip` is then the address the trusted proxy forwarded: the quota key without authentication.
    trustProxy: config.http.trustProxy.length === 0 ? false : [...config.http.trustProxy],
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    requestIdHeader: false,
    genReqId: requestId,
    // One pino logger for the process; Fastify gives each request a child with its `reqId`,
    // made only when the request writes a line.
    loggerInstance: fastifyLogger(logger),
    logController: new AccessLog((request) => !routeProfileOf(request).accessLog),
    // Connection-level limits (slowloris, idle keep-alive); see docs/reliability.md. Sockets
    // silent while a request is in flight are closed by the drain's connection tracker
    // (`shutdown.bind`), not by Node's socket timeout, which re-arms a timer on every read and write.
    requestTimeout: config.http.requestTimeoutMs,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
    // Node says `Connection: close` on the last allowed response; 0 is no limit.
    maxRequestsPerSocket: config.http.maxRequestsPerConnection,
    http: {
      headersTimeout: config.http.headersTimeoutMs,
      // Node checks both timeouts on this interval (30 s by default), so it bounds how late
      // a slow client is cut off.
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
    },
    // Errors raised before a route runs answer in problem+json too.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config, logger),
    adapter,
    {
      bodyParser: false,
      bufferLogs: true,
    },
  );
  app.useLogger(app.get(Logger));
  app.useGlobalFilters(new ProblemDetailsFilter());
  // No global ValidationPipe: every input is checked by its compiled schema
  // (packages/core/src/common/validation.ts), in time linear in its size.

  const fastify = app.getHttpAdapter().getInstance();
  const registry = app.get(TaskRegistry);
  const shutdown = app.get(ShutdownService);
  shutdown.bind(fastify.server);
  if (config.http.intake.maxInProgress > 0) {
    const loop = new LoopUtilization();
    new IntakeGate(config.http.intake, loop).bind(fastify.server);
    fastify.addHook('onClose', (_instance, done) => {
      loop.stop();
      done();
    });
  }
  fastify.addHook('onClose', (_instance, done) => {
    authenticator?.close();
    done();
  });
  // After the last response: the spans still buffered are exported before the process exits.
  if (tracing !== undefined) fastify.addHook('onClose', () => stopTracing());
  const taskQuota = await registerQuotas(fastify, {
    quotas: config.quotas,
    redisUrl: config.jobs.redisUrl,
    redisPrefix: config.jobs.queuePrefix,
    clientKey: quotaKeyOptions(config),
    log: logger,
    isExempt: (request) => routeProfileOf(request).access === 'public',
  });
  const operatorLimit = await registerOperatorRateLimit(fastify, config.operator.requestsPerSecond);
  const { adminPort } = config.http;
  // Its requests take the same way through Fastify as the public ones.
  const admin =
    adminPort === undefined
      ? undefined
      : new AdminListener(fastify.routing.bind(fastify), { ...config.http, port: adminPort });
  // Before init: Nest adds the routes during init, and onRoute must see them.
  registerHooks(fastify, {
    drain: shutdown,
    responses: app.get(HttpMetricsService),
    access: accessGate(authenticator),
    taskQuota,
    budget: app.get(BodyMemoryBudget),
    admin,
    operatorLimit,
    // Routes Fastify calls without Nest's pipeline: the hot ones (tasks, liveness).
    direct: new Map([...directTaskRoutes(app), ...directHealthRoutes(app)]),
    tracing,
    bodies: {
      jsonLimitBytes: config.http.bodyLimitBytes,
      maxJsonNodes: config.http.maxJsonNodes,
      binaryLimitBytes: config.http.binaryBodyLimitBytes,
      rawContentTypes: registry.list().flatMap((task) => task.binary?.contentTypes ?? []),
      rawBodyTask: (request) => rawBodyTask(request, registry),
    },
  });
  setupOpenApi(app, {
    tasks: registry.list(),
    authMode: config.auth.mode,
    responseSchemas: RESPONSE_SCHEMAS,
    clientKeyHeader: config.scheduler.clientKeyHeader,
    enabled: config.http.docsEnabled,
  });
  if (admin !== undefined) {
    adminListeners.set(app, admin);
    fastify.addHook('onClose', () => admin.close());
  }
  await app.init();
  return app;
}

const adminListeners = new WeakMap<NestFastifyApplication, AdminListener>();

/**
 * Starts the app's listeners: the public one on PORT and, when ADMIN_PORT is
 * set, the admin one on the same address.
 */
export async function listen(app: NestFastifyApplication, config: AppConfig): Promise<void> {
  await app.listen({
    port: config.http.port,
    host: config.http.host,
    backlog: config.http.listenBacklog,
  });
  await adminListeners.get(app)?.listen();
}
