import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiExtension, ApiQuery, DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import type { SchemaObject } from '@nestjs/swagger';
import type { ErrorCode } from '../common/error-codes';
import type { InputSchema, JsonSchema } from '@corepool/core';
import {
  completeDocument,
  openApiSchema,
  PROBLEMS_EXTENSION,
  queryParameters,
  type OpenApiContext,
} from './openapi-document';

/**
 * The files of swagger-ui-dist that the page Nest's Swagger module writes loads
 * (its HTML and `swagger-ui-init.js` are generated, not files). Nothing else of
 * the package is served: not its package.json, README or source maps.
 */
export const SWAGGER_UI_FILES: ReadonlySet<string> = new Set([
  '/swagger-ui.css',
  '/swagger-ui-bundle.js',
  '/swagger-ui-standalone-preset.js',
  '/favicon-32x32.png',
  '/favicon-16x16.png',
]);

/**
 * Swagger UI at `/docs` and the OpenAPI document at `/docs-json`: the
 * controllers' operations, completed with one operation per task and every
 * answer (`openapi-document.ts`); nothing when `enabled` is false (DOCS_ENABLED).
 */
export function setupOpenApi(
  app: NestFastifyApplication,
  context: OpenApiContext & { readonly enabled: boolean },
): void {
  if (!context.enabled) return;
  const config = new DocumentBuilder()
    .setTitle('corepool')
    .setDescription(
      'CPU-heavy tasks on a worker-thread pool, so the event loop stays free. ' +
        'Errors are application/problem+json with a stable `code` (docs/api.md).',
    )
    .setVersion('1')
    .setLicense('MIT', 'https://opensource.org/licenses/MIT')
    // The document's own origin: the service that serves it.
    .addServer('/', 'This service')
    .addTag('tasks', 'Run a task and wait for its answer')
    .addTag('compute', "The worker-threads tutorial's endpoint, wire-compatible with it")
    .addTag('jobs', 'Durable jobs: submit, poll, stream progress, cancel')
    .addTag('health', 'Liveness and readiness probes, and detailed health')
    .addTag('metrics', 'Prometheus metrics')
    .build();
  const document = completeDocument(SwaggerModule.createDocument(app, config), context);
  onlyUiFiles(app, '/docs');
  SwaggerModule.setup('docs', app, document);
}

/**
 * Nest's Swagger module serves all of swagger-ui-dist's folder under `prefix`
 * through @fastify/static (registered on Fastify itself since NestJS 12, so
 * no option of Nest's reaches it): its wildcard route is wrapped so that a
 * file outside `SWAGGER_UI_FILES` is not found.
 */
function onlyUiFiles(app: NestFastifyApplication, prefix: string): void {
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      if (route.url !== `${prefix}/*`) return;
      const serve = route.handler;
      route.handler = function (this: FastifyInstance, request, reply) {
        const file = `/${(request.params as { '*'?: string })['*'] ?? ''}`;
        if (!SWAGGER_UI_FILES.has(file)) return reply.callNotFound();
        return serve.call(this, request, reply);
      };
    });
}

/** A schema as plain JSON (the rules JSON Schema cannot say stay behind, under a symbol). */
export function publishedSchema(schema: JsonSchema): SchemaObject {
  return JSON.parse(JSON.stringify(schema)) as SchemaObject;
}

/** Documents a route's query parameters from the input schema that checks them. */
export function ApiQueryFrom(schema: InputSchema): MethodDecorator {
  return applyDecorators(
    ...queryParameters(schema).map(({ name, required, schema: published, description }) =>
      ApiQuery({
        name,
        required,
        schema: published,
        ...(description === undefined ? {} : { description }),
      }),
    ),
  );
}

/** Documents a route's JSON body from the input schema that checks it. */
export function ApiBodyFrom(schema: InputSchema): MethodDecorator {
  return ApiBody({ schema: openApiSchema(schema) });
}

/**
 * The codes a route answers with besides those its declared behaviour implies
 * (`HttpBehaviour`: authentication, quotas, bodies, tasks); each becomes a
 * problem+json answer of its status in the document.
 */
export function ApiProblems(...codes: ErrorCode[]): MethodDecorator {
  return ApiExtension(PROBLEMS_EXTENSION, codes);
}
