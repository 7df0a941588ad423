import { clientKeyOf, SHARED_CLIENT_KEY } from './client-key';

describe(clientKeyOf.name, () => {
  const header = 'x-client-id';

  it('takes a plain key from the configured header', () => {
    expect(clientKeyOf({ headers: { 'x-client-id': 'mobile-app.v2' } }, header)).toBe(
      'mobile-app.v2',
    );
    expect(clientKeyOf({ headers: { 'x-tenant': 'acme' } }, 'x-tenant')).toBe('acme');
  });

  it('falls back to the one shared key when the header is absent or not plain', () => {
    for (const value of [undefined, '', 'has space', '(jobs)', 'x'.repeat(65), ['a', 'b']]) {
      expect(clientKeyOf({ headers: { 'x-client-id': value } }, header)).toBe(SHARED_CLIENT_KEY);
    }
  });

  it("prefers an authenticated client's id to any header", () => {
    const identity = { id: 'key-7', scopes: new Set<string>(), authenticated: true };
    expect(clientKeyOf({ identity, headers: { 'x-client-id': 'someone' } }, header)).toBe('key-7');
  });
});
