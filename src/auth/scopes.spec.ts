import { allows, Scope } from './scopes';

describe(allows.name, () => {
  it('lets anyone through public and authenticated routes', () => {
    expect(allows('public', new Set())).toBe(true);
    expect(allows('authenticated', new Set())).toBe(true);
  });

  it('needs the route’s scope, or admin', () => {
    expect(allows(Scope.TASKS_RUN, new Set([Scope.TASKS_RUN]))).toBe(true);
    expect(allows(Scope.TASKS_RUN, new Set([Scope.JOBS_READ]))).toBe(false);
    expect(allows(Scope.JOBS_WRITE, new Set([Scope.ADMIN]))).toBe(true);
    expect(allows(Scope.ADMIN, new Set([Scope.TASKS_RUN, Scope.JOBS_READ]))).toBe(false);
  });
});
