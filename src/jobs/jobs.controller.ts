import { Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Errors } from '../common/app-error';
import { validateInput } from '../common/validation';
import { Scope } from '../auth/scopes';
import { AppConfig } from '../config/app-config';
import { ApiBodyFrom, ApiQueryFrom } from '../http/openapi';
import { HttpBehaviour } from '../http/route-behaviour';
import { mediaType, TaskInputReader } from '../http/task-input-reader';
import { TaskRegistry } from '../tasks/task-registry';
import { listJobsQuery } from './dto/list-jobs-query.dto';
import { submitJobInput } from './dto/submit-job.dto';
import { JobStore } from './job-store';
import { presentJob, type PresentedJob } from './job-view.presenter';
import type { JobPayload, JobView } from './job.types';

/** Query parameters of a binary submission that belong to the job, not to the task. */
const JOB_PARAMS = new Set(['task', 'encrypt']);

@ApiTags('jobs')
@Controller('api/jobs')
export class JobsController {
  constructor(
    private readonly store: JobStore,
    private readonly registry: TaskRegistry,
    private readonly config: AppConfig,
  ) {}

  @Post()
  // Binary tasks: the raw body is the input of the task named by `?task=`.
  @HttpBehaviour({ taskBody: { query: 'task' }, access: Scope.JOBS_WRITE })
  @HttpCode(202)
  @ApiOperation({
    summary: 'Submit a job: 202 with its id and a Location to poll',
    description:
      'JSON tasks: body `{ task, input, encrypt? }`. Binary tasks: the raw body, with ' +
      '`?task=<name>` and the task options (and `encrypt=true`) in the query string. ' +
      'The input is validated now: a bad job is refused at once, never failed later.',
  })
  @ApiBodyFrom(submitJobInput)
  async submit(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<{ id: string; status: string; links: JobView['links'] }> {
    const payload = this.readPayload(request);
    const job = await this.store.submit(payload);
    void reply.header('location', job.links.self);
    return { id: job.id, status: job.status, links: job.links };
  }

  @Get()
  @HttpBehaviour({ access: Scope.JOBS_READ })
  @ApiOperation({ summary: 'Recent jobs, newest first, optionally by status; paginated' })
  @ApiQueryFrom(listJobsQuery)
  async list(@Query() rawQuery: Record<string, unknown>) {
    const query = validateInput(listJobsQuery, rawQuery, 'query');
    const page = await this.store.list(query);
    const next =
      page.nextOffset === undefined
        ? undefined
        : `/api/jobs?${new URLSearchParams({
            ...(query.status === undefined ? {} : { status: query.status }),
            limit: String(query.limit),
            offset: String(page.nextOffset),
          }).toString()}`;
    return { items: page.items.map(presentJob), links: { next } };
  }

  @Get(':id')
  @HttpBehaviour({ access: Scope.JOBS_READ })
  @ApiOperation({ summary: "A job's status, attempts, times, and its result or error" })
  async get(@Param('id') id: string): Promise<PresentedJob> {
    const job = await this.store.get(id);
    if (job === undefined) throw Errors.jobNotFound(id);
    return presentJob(job);
  }

  @Delete(':id')
  @HttpBehaviour({ access: Scope.JOBS_WRITE })
  @ApiOperation({ summary: 'Cancel a job: a queued job is removed, a running one aborted' })
  async cancel(@Param('id') id: string): Promise<PresentedJob> {
    const job = await this.store.cancel(id);
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
      const body = TaskInputReader.binaryBody(task, request, this.config.jobs.maxBodyBytes);
      const options = Object.fromEntries(
        Object.entries(query).filter(([name]) => !JOB_PARAMS.has(name)),
      );
      if (query.encrypt !== undefined && query.encrypt !== 'true' && query.encrypt !== 'false') {
        throw Errors.validationFailed('encrypt must be true or false', [
          { property: 'query.encrypt', messages: ['encrypt must be true or false'] },
        ]);
      }
      const input = TaskInputReader.options(task, options);
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
