/**
 * What a client may do. A key or a token carries scopes; each route declares
 * the one it needs (`@HttpBehaviour({ access })`). `admin` may do everything,
 * and see every client's jobs.
 */
export const Scope = {
  TASKS_RUN: 'tasks:run',
  JOBS_READ: 'jobs:read',
  JOBS_WRITE: 'jobs:write',
  ADMIN: 'admin',
} as const;

export type Scope = (typeof Scope)[keyof typeof Scope];

/** Every scope there is: a name outside this list is a typo or a cut line, never a grant. */
export const SCOPES: readonly Scope[] = Object.values(Scope);

export const isScope = (name: string): name is Scope =>
  (SCOPES as readonly string[]).includes(name);

/**
 * Who may call a route: `public` (probes: anyone, unauthenticated),
 * `authenticated` (any known client), or a scope the client must hold.
 */
export type RouteAccess = 'public' | 'authenticated' | Scope;

/** True when a client holding `scopes` may call a route that needs `access`. */
export function allows(access: RouteAccess, scopes: ReadonlySet<string>): boolean {
  if (access === 'public' || access === 'authenticated') return true;
  return scopes.has(access) || scopes.has(Scope.ADMIN);
}
