import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiQuery, DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type { InputSchema, JsonSchema } from '../tasks/input-schema';

/** Swagger UI at `/docs`, with each task's input schema (`taskSchemas`, from its DTO). */
export function setupOpenApi(
  app: NestFastifyApplication,
  taskSchemas: Readonly<Record<string, SchemaObject>>,
): void {
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
  SwaggerModule.setup('docs', app, document);
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
