import { identityOf, type ClientIdentity } from '../auth/client-identity';
import type { JobCaller } from './job-queue';

/** The scope that sees and cancels every owner's jobs. */
export const ADMIN_SCOPE = 'admin';

/** The request's caller as the job queue scopes it: owner id, and admin or not. */
export function callerOf(request: { identity?: ClientIdentity }): JobCaller {
  const identity = identityOf(request);
  return { id: identity.id, admin: identity.scopes.has(ADMIN_SCOPE) };
}
