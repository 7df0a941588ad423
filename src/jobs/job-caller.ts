import { identityOf, type ClientIdentity } from '../auth/client-identity';
import { Scope } from '../auth/scopes';
import type { JobCaller } from './job-queue';

/** The request's caller as the job queue scopes it: owner id, and whether `admin` lets it see every owner's jobs. */
export function callerOf(request: { identity?: ClientIdentity | null }): JobCaller {
  const identity = identityOf(request);
  return { id: identity.id, admin: identity.scopes.has(Scope.ADMIN) };
}
