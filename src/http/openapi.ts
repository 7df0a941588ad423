import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiQuery, DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
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
  SwaggerModule.setup('docs', withOnlyUiFiles(app), document);
}

/**
 * The app as Nest's Swagger module sees it, except that the static files it
 * serves (all of swagger-ui-dist's folder) are limited to `SWAGGER_UI_FILES`,
 * through @fastify/static's own `allowedPath`.
 */
function withOnlyUiFiles(app: NestFastifyApplication): NestFastifyApplication {
  const useStaticAssets = (options: Parameters<NestFastifyApplication['useStaticAssets']>[0]) =>
    app.useStaticAssets({
      ...options,
      index: false,
      allowedPath: (path: string) => SWAGGER_UI_FILES.has(path),
    });
  // Every other property is read from the app itself, through the prototype.
  return Object.create(app, {
    useStaticAssets: { value: useStaticAssets },
  }) as NestFastifyApplication;
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
