import type { SchemaObject } from '@nestjs/swagger';
import { JOB_STATUSES } from '../job.types';

const ISO_TIME: SchemaObject = { type: 'string', format: 'date-time' };
const LINKS: SchemaObject = {
  type: 'object',
  required: ['self'],
  properties: { self: { type: 'string', description: 'The job: `/api/jobs/{id}`.' } },
};

/** A job as `GET /api/jobs/:id` shows it (`PresentedJob`). */
export const JOB_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['id', 'task', 'owner', 'status', 'attempts', 'createdAt', 'links'],
  properties: {
    id: { type: 'string' },
    task: { type: 'string' },
    owner: {
      type: 'string',
      description: "The submitter's identity; only they, or an admin, see it.",
    },
    status: { type: 'string', enum: [...JOB_STATUSES] },
    attempts: { type: 'integer', description: 'Runs started so far.' },
    createdAt: ISO_TIME,
    startedAt: ISO_TIME,
    finishedAt: ISO_TIME,
    progress: {
      type: 'object',
      required: ['fraction', 'at'],
      properties: {
        fraction: { type: 'number', minimum: 0, maximum: 1 },
        message: { type: 'string' },
        at: ISO_TIME,
      },
    },
    result: {
      type: 'object',
      required: ['value', 'waitMs', 'runMs', 'runner'],
      properties: {
        value: {
          description:
            "The task's output; with `encrypt`, an AES-256-GCM envelope whose fields are base64.",
        },
        waitMs: { type: 'number' },
        runMs: { type: 'number' },
        runner: {
          type: 'object',
          required: ['host', 'pid', 'threadId'],
          properties: {
            host: { type: 'string' },
            pid: { type: 'integer' },
            threadId: { type: 'integer' },
          },
        },
      },
    },
    error: {
      type: 'object',
      description: 'A failed job: the code the synchronous API would answer, with its status.',
      required: ['code', 'status', 'title', 'detail'],
      properties: {
        code: { type: 'string' },
        status: { type: 'integer' },
        title: { type: 'string' },
        detail: { type: 'string' },
      },
    },
    traceId: { type: 'string', description: "The submission's trace, when it was sampled." },
    links: LINKS,
  },
};

/** `POST /api/jobs`: 202 for a new job, 200 for the original of a retry. */
export const JOB_ACCEPTED_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['id', 'status', 'links'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string', enum: [...JOB_STATUSES] },
    links: LINKS,
  },
};

/** `GET /api/jobs`: a page, newest first. */
export const JOB_LIST_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['items', 'links'],
  properties: {
    items: { type: 'array', items: { $ref: '#/components/schemas/Job' } },
    links: {
      type: 'object',
      properties: {
        next: { type: 'string', description: 'The next page; absent on the last.' },
      },
    },
  },
};
