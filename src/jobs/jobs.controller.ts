import { Controller, Delete, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { ErrorCode } from '../common/error-codes';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, Errors } from '../common/app-error';
import { quotaKeyOf, quotaKeyOptions } from '../auth/client-key';
import { validateInput } from '@corepool/core/host';
import { Scope } from '../auth/scopes';
import { AppConfig } from '../config/app-config';
import { ShutdownService } from '../lifecycle/shutdown.service';
import { ApiProblems, ApiQueryFrom } from '../http/openapi';
import { HttpBehaviour } from '../http/route-behaviour';
import { mediaType, TaskInputReader } from '../http/task-input-reader';
import { TaskRegistry } from '@corepool/core';
import { activeTracing } from '../tracing/tracing';
import { listJobsQuery } from './dto/list-jobs-query.dto';
import { submitJobInput } from './dto/submit-job.dto';
import { fingerprintOf, idempotencyKeyOf } from './idempotency';
import { EventStreamLimits } from './event-stream-limits';
import { callerOf } from './job-caller';
import { jobEventStream, lastEventIdOf } from './job-event-stream';
import { JobQueue, type Submitted } from './job-queue';
import { presentJob, type PresentedJob } from './job-view.presenter';
import type { JobPayload } from './job.types';

/** `POST /api/jobs`'s answer, new (202) or the original of a retry (200). */
const JOB_ACCEPTED = {
  schema: { $ref: getSchemaPath('JobAccepted') },
  headers: { location: { $ref: '#/components/headers/location' } },
};

@ApiTags('jobs')
@Controller('api/jobs')
export class JobsController {
  private readonly streams: EventStreamLimits;

  constructor(
    private readonly queue: JobQueue,
    private readonly registry: TaskRegistry,
    private readonly config: AppConfig,
    private readonly lifecycle: ShutdownService,
  ) {
    this.streams = new EventStreamLimits(
      config.jobs.eventsMaxStreams,
      config.jobs.eventsMaxStreamsPerClient,
    );
  }

  @Post()
  // Binary tasks: the raw body is the input of the task named by `?task=`.
  // `encrypt` belongs to the job; the rest of the query is the task's options.
  @HttpBehaviour({
    taskBody: { query: 'task', routeQuery: ['encrypt'] },
    access: Scope.JOBS_WRITE,
  })
  @ApiOperation({
    summary:
      'Submit a job: 202 with its id and a Location to poll (200: a retry of the same submission)',
    description:
      'JSON tasks: body `{ task, input, encrypt? }`. Binary tasks: the raw body, with ' +
      '`?task=<name>` and the task options (and `encrypt=true`) in the query string. ' +
      'The input is validated now: a bad job is refused at once, never failed later. ' +
      'With `Idempotency-Key`, a retry with the same body returns the original job (200); ' +
      'the same key with another body is 422 `IDEMPOTENCY_KEY_REUSED`.',
  })
  @ApiHeader({
    name: 'idempotency-key',
    required: false,
    description: 'A retry with the same key and body returns the original job (200).',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
  })
  @ApiResponse({ status: 202, description: 'Queued', ...JOB_ACCEPTED })
  @ApiResponse({ status: 200, description: 'The original job of a retry', ...JOB_ACCEPTED })
  @ApiProblems(
    ErrorCode.IDEMPOTENCY_KEY_REUSED,
    ErrorCode.JOB_QUEUE_FULL,
    ErrorCode.QUEUE_UNAVAILABLE,
  )
  async submit(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const key = idempotencyKeyOf(request.headers['idempotency-key']);
    const validated = this.readPayload(request);
    // Tracing off, or the request not sampled: no span, and no context stored with the job (ADR 0048).
    const submitTrace =
      request.traceSpan === null
        ? undefined
        : activeTracing()?.startJobSubmit(request.traceSpan, validated.task);
    const payload =
      submitTrace === undefined ? validated : { ...validated, trace: submitTrace.context };
    let submitted: Submitted;
    try {
      submitted = await this.queue.submit({
        payload,
        owner: callerOf(request).id,
        ...(key === undefined ? {} : { idempotency: { key, fingerprint: fingerprintOf(payload) } }),
      });
    } catch (error) {
      submitTrace?.ended(error instanceof AppError ? error : Errors.internal());
      throw error;
    }
    const { job, created } = submitted;
    submitTrace?.ended({ jobId: job.id, created });
    // Sent here: the status depends on the answer (202 new, 200 the original of a retry).
    await reply
      .status(created ? 202 : 200)
      .header('location', job.links.self)
      .send({ id: job.id, status: job.status, links: job.links });
  }

  @Get()
  @HttpBehaviour({ access: Scope.JOBS_READ })
  @ApiOperation({
    summary: "The caller's jobs, newest first, optionally by status; cursor pages (links.next)",
  })
  @ApiQueryFrom(listJobsQuery)
  @ApiOkResponse({ description: 'A page of jobs', schema: { $ref: getSchemaPath('JobList') } })
  @ApiProblems(
    ErrorCode.VALIDATION_FAILED,
    ErrorCode.OFFSET_NOT_SUPPORTED,
    ErrorCode.QUEUE_UNAVAILABLE,
  )
  async list(@Req() request: FastifyRequest, @Query() rawQuery: Record<string, unknown>) {
    // Offsets cost more the deeper the page; cursors do not. Say so rather than ignore it.
    if (rawQuery.offset !== undefined) throw Errors.offsetNotSupported();
    const query = validateInput(listJobsQuery, rawQuery, 'query');
    const page = await this.queue.list(query, callerOf(request));
    const next =
      page.nextCursor === undefined
        ? undefined
        : `/api/jobs?${new URLSearchParams({
            ...(query.status === undefined ? {} : { status: query.status }),
            limit: String(query.limit),
            cursor: page.nextCursor,
          }).toString()}`;
    return { items: page.items.map(presentJob), links: { next } };
  }

  @Get(':id')
  @HttpBehaviour({ access: Scope.JOBS_READ })
  @ApiOperation({
    summary: "A job's status, attempts, times, progress, and its result or error",
    description:
      '`traceId`: the trace of its submission, which every run of the job continues; ' +
      'present when tracing is on and the submission was sampled.',
  })
  @ApiOkResponse({ description: 'The job', schema: { $ref: getSchemaPath('Job') } })
  @ApiProblems(ErrorCode.JOB_NOT_FOUND, ErrorCode.QUEUE_UNAVAILABLE)
  async get(@Req() request: FastifyRequest, @Param('id') id: string): Promise<PresentedJob> {
    const job = await this.queue.get(id, callerOf(request));
    if (job === undefined) throw Errors.jobNotFound(id);
    return presentJob(job);
  }

  @Get(':id/events')
  @HttpBehaviour({ access: Scope.JOBS_READ })
  @ApiOperation({
    summary: "A job's status changes and progress as Server-Sent Events, until it ends",
    description:
      'Each event has an id; reconnect with `Last-Event-ID` to resume after it. ' +
      'Closing the stream does not cancel the job.',
  })
  @ApiOkResponse({
    description: 'Server-Sent Events: `status` and `progress`, each with an id',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @ApiHeader({
    name: 'last-event-id',
    required: false,
    description: 'Resume after this event.',
    schema: { type: 'string' },
  })
  // RATE_LIMITED also when every event stream this process may hold is open.
  @ApiProblems(ErrorCode.JOB_NOT_FOUND, ErrorCode.QUEUE_UNAVAILABLE)
  async events(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<void> {
    const caller = callerOf(request);
    const lastEventId = lastEventIdOf(request.headers['last-event-id']);
    // Before the store is read: a refused stream costs nothing.
    const release = this.streams.acquire(quotaKeyOf(request, quotaKeyOptions(this.config)));
    if (release instanceof AppError) throw release;
    // The answer closes however it ends: refused below, ended, or left by its client.
    reply.raw.once('close', release);
    const first = await this.queue.events(id, caller, lastEventId);
    if (first === undefined) throw Errors.jobNotFound(id);
    const { pollIntervalMs, eventsHeartbeatMs } = this.config.jobs;
    const stream = jobEventStream(this.queue, id, caller, first, lastEventId, {
      pollIntervalMs,
      heartbeatMs: eventsHeartbeatMs,
      stopping: () => this.lifecycle.phase !== 'serving',
    });
    // The client left: stop reading the queue (the job itself goes on).
    reply.raw.once('close', () => stream.destroy());
    await reply
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-cache')
      // nginx would otherwise buffer the stream.
      .header('x-accel-buffering', 'no')
      .send(stream);
  }

  @Delete(':id')
  @HttpBehaviour({ access: Scope.JOBS_WRITE })
  @ApiOperation({ summary: 'Cancel a job: a queued job is removed, a running one aborted' })
  @ApiOkResponse({ description: 'The job, as cancelled', schema: { $ref: getSchemaPath('Job') } })
  @ApiProblems(ErrorCode.JOB_NOT_FOUND, ErrorCode.QUEUE_UNAVAILABLE)
  async cancel(@Req() request: FastifyRequest, @Param('id') id: string): Promise<PresentedJob> {
    const job = await this.queue.cancel(id, callerOf(request));
    if (job === undefined) throw Errors.jobNotFound(id);
    return presentJob(job);
  }

  /** The same checks as `POST /api/tasks/:name`, done now, so a bad job never enters the queue. */
  private readPayload(request: FastifyRequest): JobPayload {
    const query = request.query as Record<string, unknown>;
    const contentType = mediaType(request.headers['content-type']);
    if (typeof query.task === 'string') {
      const task = this.registry.get(query.task);
      if (task === undefined) throw Errors.taskNotFound(query.task);
      if (task.binary === undefined) {
        throw Errors.validationFailed(`'${task.name}' takes JSON: send { task, input }`, [
          { property: 'query.task', messages: ['?task= is only for binary tasks'] },
        ]);
      }
      if (query.encrypt !== undefined && query.encrypt !== 'true' && query.encrypt !== 'false') {
        throw Errors.validationFailed('encrypt must be true or false', [
          { property: 'query.encrypt', messages: ['encrypt must be true or false'] },
        ]);
      }
      const input = TaskInputReader.options(task, request);
      const body = TaskInputReader.binaryBody(task, request, input, this.config.jobs.maxBodyBytes);
      return this.withEncryption({
        task: task.name,
        input,
        body,
        encrypt: query.encrypt === 'true',
      });
    }
    if (contentType !== 'application/json') {
      throw Errors.unsupportedMediaType(contentType, ['application/json'], undefined);
    }
    const submission = validateInput(submitJobInput, request.body);
    const task = this.registry.get(submission.task);
    if (task === undefined) throw Errors.taskNotFound(submission.task);
    if (task.binary !== undefined) {
      throw Errors.validationFailed(
        `'${task.name}' takes raw bytes: POST them with ?task=${task.name}`,
        [{ property: 'task', messages: ['binary tasks take a raw body and ?task='] }],
      );
    }
    const input = TaskInputReader.json(task, submission.input ?? {});
    return this.withEncryption({ task: task.name, input, encrypt: submission.encrypt === true });
  }

  private withEncryption(payload: JobPayload): JobPayload {
    if (payload.encrypt && this.config.jobs.resultEncryptionKey === undefined) {
      throw Errors.validationFailed('encrypt needs RESULT_ENCRYPTION_KEY, which is not set', [
        { property: 'encrypt', messages: ['result encryption is not configured'] },
      ]);
    }
    return payload;
  }
}
