import { clientKeyOf, quotaKeyOf, SHARED_CLIENT_KEY } from './client-key';

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

describe(quotaKeyOf.name, () => {
  const untrusted = { header: 'x-client-id', trustHeader: false };
  const trusted = { header: 'x-client-id', trustHeader: true };

  it('keys an unauthenticated caller by its address, whatever header it sends', () => {
    for (const value of [undefined, 'mobile-app', 'other']) {
      expect(quotaKeyOf({ ip: '10.1.2.3', headers: { 'x-client-id': value } }, untrusted)).toBe(
        'address:10.1.2.3',
      );
    }
  });

  it('takes a plain key from the header only when it is trusted', () => {
    const headers = { 'x-client-id': 'mobile-app' };
    expect(quotaKeyOf({ ip: '10.1.2.3', headers }, trusted)).toBe('mobile-app');
    expect(quotaKeyOf({ ip: '::1', headers: { 'x-client-id': 'has space' } }, trusted)).toBe(
      'address:::1',
    );
  });

  it("prefers an authenticated client's id to the header and the address", () => {
    const identity = { id: 'key-7', scopes: new Set<string>(), authenticated: true };
    const request = { identity, ip: '10.1.2.3', headers: { 'x-client-id': 'someone' } };
    expect(quotaKeyOf(request, trusted)).toBe('key-7');
  });
});
