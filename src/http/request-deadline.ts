import { Errors } from '../common/app-error';

/** corepool's own deadline header: how long the client waits, in ms from sending. */
export const DEADLINE_HEADER = 'x-request-timeout-ms';
/** The remaining time Envoy (and Istio) gives every upstream request, in ms. */
export const ENVOY_DEADLINE_HEADER = 'x-envoy-expected-rq-timeout-ms';

/** A day: longer than any deadline corepool could honour (`TASK_TIMEOUT_MS` caps it anyway). */
const MAX_DEADLINE_MS = 86_400_000;
const WHOLE_MS = /^\d{1,8}$/;

/**
 * The client's own deadline in ms from the request's arrival: the earlier of
 * corepool's header and Envoy's, or undefined when neither is sent. A header
 * that is not a whole number from 1 to 86,400,000 is refused with 400
 * `INVALID_DEADLINE`: a deadline the client got wrong should not be
 * silently replaced by a longer one.
 */
export function clientDeadlineMs(
  headers: Record<string, string | string[] | undefined>,
): number | undefined {
  let earliest: number | undefined;
  for (const name of [DEADLINE_HEADER, ENVOY_DEADLINE_HEADER]) {
    const value = headers[name];
    if (value === undefined) continue;
    const ms = typeof value === 'string' && WHOLE_MS.test(value.trim()) ? Number(value) : NaN;
    if (!(ms >= 1 && ms <= MAX_DEADLINE_MS)) throw Errors.invalidDeadline(name, MAX_DEADLINE_MS);
    earliest = earliest === undefined ? ms : Math.min(earliest, ms);
  }
  return earliest;
}
