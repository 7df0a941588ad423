import type {
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  ReferenceObject,
  RequestBodyObject,
  ResponseObject,
  SchemaObject,
  SecuritySchemeObject,
} from '@nestjs/swagger';
import { ErrorCode } from '../common/error-codes';
import type { InputSchema, JsonSchema } from '@corepool/core';
import type { TaskDefinition } from '@corepool/core';
import type { TaskInputCode } from '@corepool/core';
import {
  headerRef,
  PROBLEM_SCHEMA,
  problemResponse,
  problemResponseName,
  problemsByStatus,
  REQUEST_ID_HEADER,
  RESPONSE_HEADERS,
} from './openapi-problems';
import { DEADLINE_HEADER, ENVOY_DEADLINE_HEADER } from './request-deadline';
import { BEHAVIOUR_EXTENSION, type RouteBehaviour } from './route-behaviour';

/** Where `ApiProblems` lists a route's own codes, until the document is completed. */
export const PROBLEMS_EXTENSION = 'x-corepool-problems';

/** Marks the operation of one task, which cannot answer TASK_NOT_FOUND. */
const KNOWN_TASK_EXTENSION = 'x-corepool-known-task';

/** The `x-` keys of an operation (the interface declares none). */
const extensionsOf = (operation: OperationObject) =>
  operation as OperationObject & Record<`x-${string}`, unknown>;

/** What the document is completed from: the tasks and the settings that change the contract. */
export interface OpenApiContext {
  readonly tasks: readonly TaskDefinition[];
  /** `AUTH_MODE`: which security schemes the document declares. */
  readonly authMode: 'none' | 'api-key' | 'jwt';
  /**
   * The controllers' answers by schema name (`TaskResult`, `Job`, …), put into the
   * document's components: the composition root hands them in, since the edge's
   * kit does not import the feature folders that define them.
   */
  readonly responseSchemas: Readonly<Record<string, SchemaObject>>;
  /** `CLIENT_KEY_HEADER`: the fair-share key of a task's caller. */
  readonly clientKeyHeader: string;
}

/** Any request can be answered so, whatever its route. */
const EVERY_ROUTE: readonly ErrorCode[] = [
  ErrorCode.REQUEST_TIMEOUT,
  ErrorCode.HEADERS_TOO_LARGE,
  ErrorCode.SHUTTING_DOWN,
  ErrorCode.INTERNAL_ERROR,
];

/** A route that reads a body: its parse, its limit, its content type, the bodies' memory budget. */
const WITH_BODY: readonly ErrorCode[] = [
  ErrorCode.VALIDATION_FAILED,
  ErrorCode.PAYLOAD_TOO_LARGE,
  ErrorCode.UNSUPPORTED_MEDIA_TYPE,
  ErrorCode.POOL_SATURATED,
];

/** What a task may say about input it finds unusable on its thread (`TaskInputError`). */
const TASK_INPUT = {
  VALIDATION_FAILED: ErrorCode.VALIDATION_FAILED,
  INVALID_DOCUMENT: ErrorCode.INVALID_DOCUMENT,
  DOCUMENT_ENCRYPTED: ErrorCode.DOCUMENT_ENCRYPTED,
} as const satisfies Record<TaskInputCode, ErrorCode>;

/** A route that runs a task on the pool (`runsTask`). */
const RUNS_TASK: readonly ErrorCode[] = [
  ErrorCode.INVALID_DEADLINE,
  ErrorCode.POOL_SATURATED,
  ErrorCode.TASK_TIMEOUT,
  ErrorCode.TASK_FAILED,
  ErrorCode.WORKER_CRASHED,
  ErrorCode.WORKER_OUT_OF_MEMORY,
  ...Object.values(TASK_INPUT),
];

const TASK_PATH = '/api/tasks/{name}';
const JOBS_PATH = '/api/jobs';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** `matrix-multiply` → `MatrixMultiply`. */
const pascal = (name: string) =>
  name
    .split(/[^a-zA-Z0-9]+/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

const schemaRef = (name: string): ReferenceObject => ({ $ref: `#/components/schemas/${name}` });
const BYTES: SchemaObject = { type: 'string', format: 'binary' };

/**
 * A JSON Schema as OpenAPI 3.0 takes it: the same object the input checks
 * compile, less what 3.0 refuses (an empty `required`, which means nothing).
 */
export function openApiSchema(schema: JsonSchema): SchemaObject {
  return JSON.parse(JSON.stringify(schema), (key, value: unknown) =>
    key === 'required' && Array.isArray(value) && value.length === 0 ? undefined : value,
  ) as SchemaObject;
}

/** The query parameters of an input schema (a binary task's options, a route's query). */
export function queryParameters(schema: InputSchema, describe = ''): ParameterObject[] {
  return Object.entries(schema.properties).map(([name, property]) => {
    const published = openApiSchema(property);
    const description = [published.description, describe].filter(Boolean).join(' ');
    return {
      name,
      in: 'query',
      required: schema.required.includes(name),
      schema: published,
      ...(description === '' ? {} : { description }),
    };
  });
}

const schemaNameOf = (task: TaskDefinition) => task.input.title ?? `${pascal(task.name)}Input`;

/**
 * Completes the document Nest's Swagger module built from the controllers:
 * one operation per task, typed by its input; every answer of every route
 * (the problem+json refusals derived from each route's declared behaviour and
 * its own `ApiProblems`); request and response headers; the security schemes
 * of `AUTH_MODE`. A client generated from it can send each task its input.
 */
export function completeDocument(document: OpenAPIObject, context: OpenApiContext): OpenAPIObject {
  const components = (document.components ??= {});
  const schemas = (components.schemas ??= {});
  // A binary task's input is its query string: its parameters carry the schema.
  for (const task of context.tasks.filter((each) => each.binary === undefined)) {
    schemas[schemaNameOf(task)] = openApiSchema(task.input);
  }
  Object.assign(schemas, { Problem: PROBLEM_SCHEMA, ...context.responseSchemas });
  components.headers = { ...RESPONSE_HEADERS };
  components.responses ??= {};
  components.parameters = {
    RequestTimeoutMs: deadlineParameter(
      DEADLINE_HEADER,
      "corepool's deadline header: how long the client waits, in ms from sending.",
    ),
    EnvoyExpectedRqTimeoutMs: deadlineParameter(
      ENVOY_DEADLINE_HEADER,
      "Envoy's (and Istio's): the time Envoy gives the request, in ms.",
    ),
    ClientKey: {
      name: context.clientKeyHeader,
      in: 'header',
      required: false,
      description:
        'The fair-share key when authentication identifies no client: tasks are queued per key and served round robin.',
      schema: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,64}$' },
    },
  };
  const security = securityOf(context.authMode);
  if (security.schemes !== undefined) components.securitySchemes = security.schemes;
  document.security = security.requirement;

  expandTasks(document, context.tasks);
  describeJobSubmission(document, context.tasks);
  for (const [, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation !== undefined) completeOperation(operation, method, context, components);
    }
  }
  // The headers no answer of this configuration carries (`WWW-Authenticate` without authentication).
  const text = JSON.stringify(document);
  for (const name of Object.keys(components.headers)) {
    if (!text.includes(`"#/components/headers/${name}"`)) delete components.headers[name];
  }
  return document;
}

function deadlineParameter(name: string, description: string): ParameterObject {
  return {
    name,
    in: 'header',
    required: false,
    description: `${description} The task's deadline is the earliest of the deadline headers and TASK_TIMEOUT_MS, from arrival; not a whole number of ms from 1 to 86400000: 400 \`INVALID_DEADLINE\`.`,
    schema: { type: 'integer', minimum: 1, maximum: 86_400_000 },
  };
}

interface Security {
  readonly schemes?: Record<string, SecuritySchemeObject>;
  readonly requirement: Array<Record<string, string[]>>;
}

/** The schemes `AUTH_MODE` accepts (docs/security.md); none: every caller is anonymous. */
function securityOf(mode: OpenApiContext['authMode']): Security {
  switch (mode) {
    case 'none':
      return { requirement: [] };
    case 'api-key':
      return {
        schemes: {
          apiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'x-api-key',
            description: 'An API key (AUTH_API_KEYS_FILE).',
          },
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'The same API key, as `Authorization: Bearer <key>`.',
          },
        },
        requirement: [{ apiKey: [] }, { bearer: [] }],
      };
    case 'jwt':
      return {
        schemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description:
              'A token of the identity provider; a claim of it carries corepool scopes (docs/security.md).',
          },
        },
        requirement: [{ bearer: [] }],
      };
  }
}

/** One `POST /api/tasks/<name>` per task, beside the generic `/api/tasks/{name}`. */
function expandTasks(document: OpenAPIObject, tasks: readonly TaskDefinition[]): void {
  const generic = document.paths[TASK_PATH]?.post;
  if (generic === undefined) return;
  const typed: Record<string, { post: OperationObject }> = {};
  for (const task of tasks) {
    const operation = structuredClone(generic);
    operation.operationId = `run${pascal(task.name)}`;
    operation.summary = `Run ${task.name}`;
    operation.description = task.description;
    operation.parameters = (operation.parameters ?? []).filter(
      (parameter) => !('name' in parameter && parameter.name === 'name'),
    );
    if (task.binary !== undefined) operation.parameters.push(...queryParameters(task.input));
    operation.requestBody = taskBody(task);
    operation.responses = { '200': taskAnswer(task) };
    // The task is named by the path: it exists.
    extensionsOf(operation)[KNOWN_TASK_EXTENSION] = true;
    typed[`/api/tasks/${task.name}`] = { post: operation };
  }
  generic.requestBody = {
    required: true,
    description:
      'A JSON task: its input. A binary task: raw bytes, with its options in the query string. The operation of each task types its own.',
    content: {
      // A JSON task's input object, or the document a binary task reads (json-stats: an array).
      'application/json': { schema: {} },
      ...Object.fromEntries(binaryContentTypes(tasks).map((type) => [type, { schema: BYTES }])),
    },
  };
  generic.responses = {
    '200': {
      description:
        "The task's output: JSON as a `TaskResult`, or the bytes of a task whose output is bytes.",
      content: {
        'application/json': { schema: schemaRef('TaskResult') },
        'application/octet-stream': { schema: BYTES },
      },
    },
  };
  document.paths = { ...document.paths, ...typed };
}

const binaryContentTypes = (tasks: readonly TaskDefinition[]) => [
  ...new Set(
    tasks
      .flatMap((task) => task.binary?.contentTypes ?? [])
      .filter((type) => type !== 'application/json'),
  ),
];

function taskBody(task: TaskDefinition): RequestBodyObject {
  if (task.binary === undefined) {
    return {
      required: true,
      content: { 'application/json': { schema: schemaRef(schemaNameOf(task)) } },
    };
  }
  return {
    required: true,
    description: 'The raw bytes; the options go in the query string.',
    content: Object.fromEntries(
      task.binary.contentTypes.map((type) => [
        type,
        // A JSON body a binary task reads itself (json-stats): any JSON document.
        { schema: type === 'application/json' ? {} : BYTES },
      ]),
    ),
  };
}

function taskAnswer(task: TaskDefinition): ResponseObject {
  if (task.binary?.output !== 'bytes') {
    return {
      description: "The task's output, and how long it waited and ran.",
      content: { 'application/json': { schema: schemaRef('TaskResult') } },
    };
  }
  return {
    description: "The task's output bytes; its times in headers.",
    headers: {
      'x-task-wait-ms': headerRef('x-task-wait-ms'),
      'x-task-run-ms': headerRef('x-task-run-ms'),
    },
    content: Object.fromEntries(answerTypes(task).map((type) => [type, { schema: BYTES }])),
  };
}

/**
 * The content types a bytes task may answer with: its `responseContentType`
 * for its default options and for each value of each option that is a choice
 * (compress: one per format).
 */
function answerTypes(task: TaskDefinition): string[] {
  const binary = task.binary;
  if (binary?.responseContentType === undefined) return ['application/octet-stream'];
  const properties = task.input.properties;
  const defaults = Object.fromEntries(
    Object.entries(properties).flatMap(([name, property]) =>
      property.default === undefined ? [] : [[name, property.default]],
    ),
  );
  const choices = Object.entries(properties).flatMap(([name, property]) =>
    (property.enum ?? []).map((value) => ({ ...defaults, [name]: value })),
  );
  return [...new Set([defaults, ...choices].map((input) => binary.responseContentType!(input)))];
}

/** `POST /api/jobs`: a JSON task's input typed per task; a binary task's raw body and options. */
function describeJobSubmission(document: OpenAPIObject, tasks: readonly TaskDefinition[]): void {
  const submit = document.paths[JOBS_PATH]?.post;
  const schemas = document.components?.schemas;
  if (submit === undefined || schemas === undefined) return;
  const variants: ReferenceObject[] = [];
  for (const task of tasks.filter((each) => each.binary === undefined)) {
    const name = `${pascal(task.name)}Job`;
    schemas[name] = {
      type: 'object',
      required: ['task'],
      additionalProperties: false,
      properties: {
        task: { type: 'string', enum: [task.name] },
        input: schemaRef(schemaNameOf(task)),
        encrypt: {
          type: 'boolean',
          description:
            'Store and return the result encrypted (AES-256-GCM, `RESULT_ENCRYPTION_KEY`).',
        },
      },
    };
    variants.push(schemaRef(name));
  }
  schemas.SubmitJob = {
    description: 'A JSON task and its input, checked as `POST /api/tasks/{name}` checks its body.',
    oneOf: variants,
  };
  const binary = tasks.filter((task) => task.binary !== undefined);
  submit.requestBody = {
    required: true,
    description:
      'JSON tasks: `{ task, input, encrypt? }`. Binary tasks: the raw body, with `?task=<name>` and its options.',
    content: {
      'application/json': { schema: schemaRef('SubmitJob') },
      ...Object.fromEntries(binaryContentTypes(tasks).map((type) => [type, { schema: BYTES }])),
    },
  };
  const seen = new Set(['task', 'encrypt']);
  const options = binary.flatMap((task) =>
    queryParameters(task.input, `(with \`task=${task.name}\`)`).filter((parameter) => {
      parameter.required = false;
      if (seen.has(parameter.name)) return false;
      seen.add(parameter.name);
      return true;
    }),
  );
  submit.parameters = [
    ...(submit.parameters ?? []),
    {
      name: 'task',
      in: 'query',
      required: false,
      description: 'A binary task, whose input is the raw body.',
      schema: { type: 'string', enum: binary.map((task) => task.name) },
    },
    {
      name: 'encrypt',
      in: 'query',
      required: false,
      description: 'With `task`: store and return the result encrypted.',
      schema: { type: 'boolean' },
    },
    ...options,
  ];
}

/** An operation's security, deadline headers and every refusal, from its declared behaviour. */
function completeOperation(
  operation: OperationObject,
  method: (typeof METHODS)[number],
  context: OpenApiContext,
  components: NonNullable<OpenAPIObject['components']>,
): void {
  const extensions = extensionsOf(operation);
  const behaviour = (extensions[BEHAVIOUR_EXTENSION] ?? {}) as RouteBehaviour;
  const own = (extensions[PROBLEMS_EXTENSION] ?? []) as readonly ErrorCode[];
  const knownTask = extensions[KNOWN_TASK_EXTENSION] === true;
  delete extensions[BEHAVIOUR_EXTENSION];
  delete extensions[PROBLEMS_EXTENSION];
  delete extensions[KNOWN_TASK_EXTENSION];

  const access = behaviour.access ?? 'authenticated';
  const codes = new Set<ErrorCode>([...EVERY_ROUTE, ...own]);
  if (access !== 'public') {
    codes.add(ErrorCode.RATE_LIMITED);
    if (context.authMode !== 'none') {
      codes.add(ErrorCode.UNAUTHENTICATED);
      if (access !== 'authenticated') codes.add(ErrorCode.FORBIDDEN);
    }
  } else {
    operation.security = [];
  }
  if (access !== 'public' && access !== 'authenticated' && context.authMode !== 'none') {
    operation.description = [operation.description, `Needs the scope \`${access}\`.`]
      .filter(Boolean)
      .join(' ');
  }
  if (behaviour.admin === true) codes.add(ErrorCode.ROUTE_NOT_FOUND);
  if (method === 'post' && operation.requestBody !== undefined) {
    for (const code of WITH_BODY) codes.add(code);
  }
  if (behaviour.taskBody !== undefined && !knownTask) codes.add(ErrorCode.TASK_NOT_FOUND);
  if (behaviour.runsTask === true) {
    for (const code of RUNS_TASK) codes.add(code);
    operation.parameters = [
      ...(operation.parameters ?? []),
      { $ref: '#/components/parameters/RequestTimeoutMs' },
      { $ref: '#/components/parameters/EnvoyExpectedRqTimeoutMs' },
      { $ref: '#/components/parameters/ClientKey' },
    ];
  }

  const responses = operation.responses;
  for (const response of Object.values(responses)) {
    if (response === undefined || '$ref' in response) continue;
    response.headers = { [REQUEST_ID_HEADER]: headerRef(REQUEST_ID_HEADER), ...response.headers };
  }
  for (const [status, statusCodes] of problemsByStatus(codes)) {
    // A status the route answers otherwise (readiness's 503 is its health body) keeps its answer.
    if (responses[String(status)] !== undefined) continue;
    const name = problemResponseName(statusCodes);
    components.responses![name] ??= problemResponse(status, statusCodes);
    responses[String(status)] = { $ref: `#/components/responses/${name}` };
  }
  operation.responses = Object.fromEntries(
    Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)),
  );
}
