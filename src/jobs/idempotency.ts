import { createHash } from 'node:crypto';
import { Errors } from '../common/app-error';
import type { JobPayload } from './job.types';

/** Longest `Idempotency-Key` accepted (the IETF draft recommends a UUID; some clients send more). */
const MAX_KEY_CHARS = 255;

/** The header's value, checked; undefined when absent. */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = Array.isArray(header) ? header[0] : header;
  if (
    key === undefined ||
    key.length === 0 ||
    key.length > MAX_KEY_CHARS ||
    !/^[\x21-\x7e]+$/.test(key)
  ) {
    throw Errors.validationFailed(
      `Idempotency-Key must be 1-${MAX_KEY_CHARS} visible ASCII characters`,
      [{ property: 'header.idempotency-key', messages: ['1-255 visible ASCII characters'] }],
    );
  }
  return key;
}

/**
 * What makes two submissions "the same request": the task, its validated
 * input, the body's bytes and the encryption flag, hashed (SHA-256) so the
 * store keeps 64 characters whatever the body's size.
 */
export function fingerprintOf(payload: JobPayload): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify([payload.task, payload.input, payload.encrypt]));
  hash.update('\0');
  if (payload.body !== undefined) hash.update(payload.body);
  return hash.digest('hex');
}
