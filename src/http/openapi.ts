import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TaskCatalogService } from '../compute/task-catalog.service';

/** Swagger UI at `/docs`, with each task's input schema taken from its DTO. */
export function setupOpenApi(app: NestFastifyApplication): void {
  const config = new DocumentBuilder()
    .setTitle('corepool')
    .setDescription(
      'CPU-heavy tasks on a worker-thread pool, so the event loop stays free. ' +
        'Errors are application/problem+json with a stable `code`.',
    )
    .setVersion('1')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  const catalog = app.get(TaskCatalogService);
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ...catalog.schemas },
  };
  SwaggerModule.setup('docs', app, document);
}
