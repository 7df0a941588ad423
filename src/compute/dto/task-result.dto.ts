import type { SchemaObject } from '@nestjs/swagger';

/** `POST /api/tasks/:name` of a task whose output is JSON. */
export const TASK_RESULT_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['task', 'result', 'timing'],
  properties: {
    task: { type: 'string', description: 'The task that ran.' },
    result: { description: "The task's output, as its description in `GET /api/tasks` says." },
    timing: {
      type: 'object',
      required: ['waitMs', 'runMs'],
      properties: {
        waitMs: {
          type: 'number',
          description: "From the request's arrival until a thread started the task.",
        },
        runMs: { type: 'number', description: 'On the thread.' },
      },
    },
  },
};

/** One entry of `GET /api/tasks` (`TaskCatalogEntry`). */
export const TASK_CATALOG_ENTRY_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['name', 'description', 'binary', 'input', 'contentTypes', 'output', 'limits'],
  properties: {
    name: { type: 'string' },
    description: { type: 'string' },
    binary: {
      type: 'boolean',
      description: 'True when the body is raw bytes and `input` describes the query string.',
    },
    input: {
      type: 'object',
      additionalProperties: true,
      description: 'JSON Schema of the accepted fields, defaults included.',
    },
    contentTypes: { type: 'array', items: { type: 'string' } },
    output: { type: 'string', enum: ['json', 'bytes'] },
    limits: {
      type: 'object',
      additionalProperties: { oneOf: [{ type: 'number' }, { type: 'string' }] },
    },
  },
};
