import { Errors, type AppError } from '../common/app-error';
import type { TaskDefinition } from '@corepool/core';

/** The most bytes a request's body may have, and the 413 of a body past it. */
export interface BodyLimit {
  readonly bytes: number;
  /** The refusal; `bodyBytes` when the body's size is known (`Content-Length`, or read whole). */
  refusal(bodyBytes?: number): AppError;
}

/** A limit the route or the server sets, the same for every body. */
export function fixedBodyLimit(bytes: number): BodyLimit {
  const refusal = () => Errors.payloadTooLarge(bytes);
  return { bytes, refusal };
}

/**
 * The limit of a raw body to a binary task with these (validated) options:
 * `outerBytes` (the server's or the route's), the task's own, or the cap its
 * options set, whichever is tightest. A refusal by the options' cap says
 * which option set it.
 */
export function rawBodyLimit(task: TaskDefinition, options: object, outerBytes: number): BodyLimit {
  const binary = task.binary;
  const fixed = Math.min(outerBytes, binary?.maxBodyBytes ?? Infinity);
  const cap = binary?.bodyCapFor?.(options);
  if (cap === undefined || cap.maxBytes >= fixed) return fixedBodyLimit(fixed);
  return {
    bytes: cap.maxBytes,
    refusal: (bodyBytes) => Errors.payloadTooLarge(cap.maxBytes, cap.explain(bodyBytes)),
  };
}
