import type { AppConfig } from '../config/app-config';
import { identityOf, type ClientIdentity } from './client-identity';

import { SHARED_CLIENT_KEY } from '@corepool/core';

// The shared and the jobs' keys are the engine's: parentheses cannot appear in a key taken from
// a header (see `clientKeyOf`), so no client can pose as the jobs.
export { JOBS_CLIENT_KEY, SHARED_CLIENT_KEY } from '@corepool/core';

/** A key from a header is used only if it is short and plain: it may become a metric label. */
const PLAIN_KEY = /^[\w.:-]{1,64}$/;

/**
 * Whose share a request's task is counted in: the authenticated client's id
 * when authentication identified one (a later issue), else the value of the
 * configured header (`CLIENT_KEY_HEADER`) when it is plain, else the one
 * shared key.
 */
export function clientKeyOf(
  request: {
    identity?: ClientIdentity | null;
    headers: Record<string, string | string[] | undefined>;
  },
  headerName: string,
): string {
  const identity = identityOf(request);
  if (identity.authenticated) return identity.id;
  const value = request.headers[headerName];
  return typeof value === 'string' && PLAIN_KEY.test(value) ? value : SHARED_CLIENT_KEY;
}

/** How an unauthenticated caller is told apart for its quotas (`CLIENT_KEY_HEADER[_TRUSTED]`). */
export interface QuotaKeyOptions {
  readonly header: string;
  /** A gateway in front sets the header: it names the caller. Otherwise any caller could pick it. */
  readonly trustHeader: boolean;
}

/**
 * Whose quota a request is counted in (requests per second, tasks in flight,
 * event streams): the authenticated client's id; without authentication the
 * header's value when it is trusted and plain, else the caller's address
 * (`request.ip`: the connection's, or the one a trusted proxy forwarded,
 * `TRUST_PROXY`). An untrusted header is never the key: a flooder would
 * send a new value with each request and never be counted.
 */
export function quotaKeyOf(
  request: {
    identity?: ClientIdentity | null;
    headers: Record<string, string | string[] | undefined>;
    ip: string;
  },
  { header, trustHeader }: QuotaKeyOptions,
): string {
  const identity = identityOf(request);
  if (identity.authenticated) return identity.id;
  const value = trustHeader ? request.headers[header] : undefined;
  return typeof value === 'string' && PLAIN_KEY.test(value) ? value : `address:${request.ip}`;
}

export function quotaKeyOptions({ scheduler }: Pick<AppConfig, 'scheduler'>): QuotaKeyOptions {
  return { header: scheduler.clientKeyHeader, trustHeader: scheduler.clientKeyHeaderTrusted };
}
