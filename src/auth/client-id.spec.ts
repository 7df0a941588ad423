import { clientIdOf } from './client-id';

describe(clientIdOf.name, () => {
  it('keeps a plain value as it is', () => {
    expect(clientIdOf('billing-service')).toBe('billing-service');
    expect(clientIdOf('svc.a:b_c-1')).toBe('svc.a:b_c-1');
  });

  it('hashes a value that is not label-safe, to distinct ids of the same plain shape', () => {
    const a = clientIdOf('auth0|5f7c8ec7c33c6c004bbafe82');
    const b = clientIdOf('auth0|5f7c8ec7c33c6c004bbafe83');
    expect(a).toMatch(/^h:[\w-]{22}$/);
    expect(b).toMatch(/^h:[\w-]{22}$/);
    expect(a).not.toBe(b);
    expect(clientIdOf('auth0|5f7c8ec7c33c6c004bbafe82')).toBe(a);
    expect(clientIdOf('x'.repeat(65))).toMatch(/^h:/);
  });
});
