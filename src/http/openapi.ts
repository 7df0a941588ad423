import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

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
