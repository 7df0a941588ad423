import { createHash } from 'node:crypto';

/** An id used as is: short and plain, so it is safe as a metric label and a log field. */
const LABEL_SAFE = /^[\w.:-]{1,64}$/;

/**
 * The client id of a credential's name or a token's claim: the value itself
 * when it is label-safe, else a hash of it (`h:` and 22 base64url characters,
 * 132 bits), so two different callers never share an id — the id owns jobs.
 */
export function clientIdOf(value: string): string {
  if (LABEL_SAFE.test(value)) return value;
  return `h:${createHash('sha256').update(value).digest('base64url').slice(0, 22)}`;
}

export function isLabelSafe(value: string): boolean {
  return LABEL_SAFE.test(value);
}
