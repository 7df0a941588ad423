import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiQuery, DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import type { SchemaObject } from '@nestjs/swagger';
import type { InputSchema, JsonSchema } from '../tasks/input-schema';

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
 * Swagger UI at `/docs` and the OpenAPI document at `/docs-json`, with each
 * task's input schema (`taskSchemas`, from its DTO); nothing when `enabled` is
 * false (DOCS_ENABLED).
 */
export function setupOpenApi(
  app: NestFastifyApplication,
  taskSchemas: Readonly<Record<string, SchemaObject>>,
  enabled = true,
): void {
  if (!enabled) return;
  const config = new DocumentBuilder()
    .setTitle('corepool')
    .setDescription(
      'CPU-heavy tasks on a worker-thread pool, so the event loop stays free. ' +
        'Errors are application/problem+json with a stable `code`.',
    )
    .setVersion('1')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ...taskSchemas },
  };
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
    ...Object.entries(schema.properties).map(([name, property]) =>
      ApiQuery({
        name,
        required: schema.required.includes(name),
        schema: publishedSchema(property),
      }),
    ),
  );
}

/** Documents a route's JSON body from the input schema that checks it. */
export function ApiBodyFrom(schema: InputSchema): MethodDecorator {
  return ApiBody({ schema: publishedSchema(schema) });
}
