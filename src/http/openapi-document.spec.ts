import type { OpenAPIObject } from '@nestjs/swagger';
import { ErrorCode } from '../common/error-codes';
import { factorialTask } from '../tasks/factorial.task';
import { hashTask } from '../tasks/hash.task';
import { ERROR_TABLE } from './error-table';
import { completeDocument, openApiSchema } from './openapi-document';
import { problemResponse } from './openapi-problems';
import { BEHAVIOUR_EXTENSION } from './route-behaviour';
import { RESPONSE_SCHEMAS } from '../openapi-responses';

/** The document Nest builds for the task route and liveness, before it is completed. */
function nestDocument(): OpenAPIObject {
  // Nest's Swagger module copies `HttpBehaviour` into the operation as this extension.
  const run = {
    operationId: 'TasksController_run',
    summary: 'Run one task',
    parameters: [{ name: 'name', in: 'path' as const, required: true, schema: { type: 'string' } }],
    responses: { '200': { description: '' } },
    [BEHAVIOUR_EXTENSION]: { taskBody: { param: 'name' }, access: 'tasks:run', runsTask: true },
  };
  const live = {
    summary: 'Liveness',
    responses: { '200': { description: 'ok' } },
    [BEHAVIOUR_EXTENSION]: { access: 'public' },
  };
  return {
    openapi: '3.0.0',
    info: { title: 'corepool', version: '1' },
    paths: { '/api/tasks/{name}': { post: run }, '/health/live': { get: live } },
  };
}

const complete = (authMode: 'none' | 'api-key') =>
  completeDocument(nestDocument(), {
    tasks: [factorialTask, hashTask],
    authMode,
    responseSchemas: RESPONSE_SCHEMAS,
    clientKeyHeader: 'x-client-id',
  }) as Record<string, any>;

describe(completeDocument.name, () => {
  it('gives each task an operation typed by its input', () => {
    const { paths } = complete('none');
    expect(paths['/api/tasks/factorial'].post.requestBody.content).toEqual({
      'application/json': { schema: { $ref: '#/components/schemas/FactorialInput' } },
    });
    const hash = paths['/api/tasks/hash'].post;
    expect(Object.keys(hash.requestBody.content)).toEqual(['application/octet-stream']);
    expect(hash.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'algorithm', in: 'query' })]),
    );
    // The task is named by its path: it cannot be missing.
    expect(hash.responses['404']).toBeUndefined();
    expect(paths['/api/tasks/{name}'].post.responses['404']).toEqual({
      $ref: '#/components/responses/TaskNotFound',
    });
  });

  it("derives a route's security and refusals from its declared behaviour", () => {
    const withKeys = complete('api-key');
    const run = withKeys.paths['/api/tasks/factorial'].post;
    expect(Object.keys(run.responses)).toEqual(
      expect.arrayContaining(['401', '403', '429', '503', '504']),
    );
    expect(run.description).toContain('tasks:run');
    expect(withKeys.security).toEqual([{ apiKey: [] }, { bearer: [] }]);
    expect(withKeys.paths['/health/live'].get.security).toEqual([]);
    expect(withKeys.paths['/health/live'].get.responses['401']).toBeUndefined();
    expect(run[BEHAVIOUR_EXTENSION]).toBeUndefined();

    const open = complete('none');
    expect(open.paths['/api/tasks/factorial'].post.responses['401']).toBeUndefined();
    expect(open.components.securitySchemes).toBeUndefined();
    expect(open.components.headers['www-authenticate']).toBeUndefined();
  });
});

describe(openApiSchema.name, () => {
  it('leaves out an empty required, which OpenAPI 3.0 refuses, and keeps the rest', () => {
    expect(openApiSchema({ type: 'object', properties: {}, required: [] })).toEqual({
      type: 'object',
      properties: {},
    });
    expect(openApiSchema(factorialTask.input).required).toEqual(['n']);
  });
});

describe(problemResponse.name, () => {
  it("answers with the codes' problem+json and the headers they carry", () => {
    const response = problemResponse(503, [ErrorCode.POOL_SATURATED]) as Record<string, any>;
    expect(response.description).toContain(ERROR_TABLE.POOL_SATURATED.title);
    expect(Object.keys(response.headers)).toEqual(['x-request-id', 'retry-after']);
    const [, own] = response.content['application/problem+json'].schema.allOf;
    expect(own.properties.code.enum).toEqual(['POOL_SATURATED']);
    expect(own.properties.status.enum).toEqual([503]);
    const unauthenticated = problemResponse(401, [ErrorCode.UNAUTHENTICATED]);
    expect(Object.keys(unauthenticated.headers ?? {})).toContain('www-authenticate');
  });
});
