import type { IncomingHttpHeaders } from 'node:http';
import type { ClientIdentity } from './client-identity';

/** Why a request was not authenticated: no credentials at all, or ones not accepted. */
export interface Rejection {
  readonly rejected: 'missing' | 'invalid';
  /** Says what is wrong with a valid-looking token (expired, another audience), never whether a key exists. */
  readonly reason?: string;
}

export type AuthenticationResult = ClientIdentity | Rejection;

export const isRejection = (result: AuthenticationResult): result is Rejection =>
  'rejected' in result;

/** One way of telling who calls (api-key, jwt). */
export interface Authenticator {
  /** Synchronous when it can be (API keys), so most requests pay no promise. */
  authenticate(headers: IncomingHttpHeaders): AuthenticationResult | Promise<AuthenticationResult>;
  /** Stops watching files and signals. */
  close(): void;
}

const BEARER = /^Bearer +(\S+)$/i;

/** The credential a request carries: `x-api-key` (API keys only), else `Authorization: Bearer`. */
export function credentialOf(
  headers: IncomingHttpHeaders,
  { apiKeyHeader }: { apiKeyHeader: boolean },
): string | undefined {
  const apiKey = headers['x-api-key'];
  if (apiKeyHeader && typeof apiKey === 'string' && apiKey !== '') return apiKey;
  const authorization = headers.authorization;
  if (authorization === undefined) return undefined;
  return BEARER.exec(authorization)?.[1];
}
