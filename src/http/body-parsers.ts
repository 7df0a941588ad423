import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, Errors } from '../common/app-error';
import type { TaskDefinition } from '@corepool/core';
import { fixedBodyLimit, rawBodyLimit, type BodyLimit } from './body-limit';
import { readBody } from './body-reader';
import { hasMoreNodesThan } from './json-node-count';
import { TaskInputReader } from './task-input-reader';

type ParserDone = (error: Error | null, body?: unknown) => void;

export interface BodyParserOptions {
  readonly jsonLimitBytes: number;
  /** Most strings, arrays and objects a JSON body may hold, counted on its bytes before JSON.parse. */
  readonly maxJsonNodes: number;
  readonly binaryLimitBytes: number;
  /** Every content type some binary task accepts, besides JSON. */
  readonly rawContentTypes: readonly string[];
  /** The binary task this request's body goes to as raw bytes, or undefined for a JSON body. */
  readonly rawBodyTask: (request: FastifyRequest) => TaskDefinition | undefined;
}

/**
 * Body parsing for the whole app (Nest's own parsers are switched off):
 * - JSON is parsed with Fastify's parser, which rejects `__proto__` and
 *   `constructor.prototype` keys, and held to the JSON limit and, before it is
 *   parsed, to `maxJsonNodes` strings, arrays and objects;
 * - a binary task's body, whatever its type (a big JSON document for
 *   `json-stats` too), stays a Buffer so it can be moved to a thread unparsed.
 * Each body reaches these parsers already held to its own limit as it
 * streamed (`guardBodyStream` in body-guard.ts), and is read into one Buffer
 * by `readBody`, whose limit is only the outer bound. Oversized bodies with a
 * Content-Length are refused before they are read (`announcedTooLarge`, an
 * `onRequest` hook).
 */
export function registerBodyParsers(fastify: FastifyInstance, options: BodyParserOptions): void {
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeAllContentTypeParsers();
  const parseJsonBody = (request: FastifyRequest, bytes: Buffer, done: ParserDone) => {
    // JSON is UTF-8 (RFC 8259); decoding would silently turn bad bytes into U+FFFD.
    if (!isUtf8(bytes)) {
      const detail = 'The body is not valid UTF-8';
      return done(Errors.validationFailed(detail, [{ property: 'body', messages: [detail] }]));
    }
    // What JSON.parse allocates is what it costs: refuse a body of too many nodes unparsed.
    if (hasMoreNodesThan(bytes, options.maxJsonNodes)) {
      const detail = `The body has more than ${options.maxJsonNodes} strings, arrays and objects`;
      return done(
        Errors.validationFailed(detail, [
          {
            property: 'body',
            messages: [
              `body must not have more than ${options.maxJsonNodes} strings, arrays and objects`,
            ],
          },
        ]),
      );
    }
    // Fastify's parser accepts a Buffer as well as a string, and answers through `done`.
    void parseJson(request, bytes as unknown as string, done);
  };
  fastify.addContentTypeParser('application/json', (request, payload, done) => {
    readBody(request, payload, options.binaryLimitBytes, (error, bytes) => {
      if (bytes === undefined) done(error);
      // A binary task that takes JSON (a big document for `json-stats`) gets the bytes unparsed.
      else if (options.rawBodyTask(request) !== undefined) done(null, bytes);
      else parseJsonBody(request, bytes, done);
    });
  });
  const rawTypes = [...new Set(options.rawContentTypes)].filter(
    (type) => type !== 'application/json',
  );
  if (rawTypes.length > 0) {
    fastify.addContentTypeParser(rawTypes, (request, payload, done) => {
      readBody(request, payload, options.binaryLimitBytes, done);
    });
  }
}

/**
 * The body limit of a request: the JSON limit, or for a raw body to a binary
 * task the tightest of BINARY_BODY_LIMIT_BYTES, the task's own and the cap
 * its options set. The options are checked here, before the body is read, as
 * the limit depends on them: invalid ones are the answer (400).
 */
export function bodyLimitFor(
  options: BodyParserOptions,
): (request: FastifyRequest) => BodyLimit | AppError {
  const jsonLimit = fixedBodyLimit(options.jsonLimitBytes);
  return (request) => {
    const task = options.rawBodyTask(request);
    if (task === undefined) return jsonLimit;
    let taskOptions: object;
    try {
      taskOptions = TaskInputReader.options(task, request);
    } catch (error) {
      if (error instanceof AppError) return error;
      throw error;
    }
    return rawBodyLimit(task, taskOptions, options.binaryLimitBytes);
  };
}

/**
 * `onRequest`: a body announced larger than its limit is refused before it is
 * read, as are options that do not validate.
 */
export function announcedTooLarge(options: BodyParserOptions) {
  const limitFor = bodyLimitFor(options);
  return (request: FastifyRequest): AppError | undefined => {
    const limit = limitFor(request);
    if (limit instanceof AppError) return limit;
    const length = Number(request.headers['content-length'] ?? 0);
    return length > limit.bytes ? limit.refusal(length) : undefined;
  };
}
