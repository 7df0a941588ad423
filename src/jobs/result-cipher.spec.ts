import { randomBytes } from 'node:crypto';
import { decryptResult, encryptResult } from './result-cipher';

describe(encryptResult.name, () => {
  const key = randomBytes(32).toString('base64');
  const value = { title: 'Invoice 42', pages: 2, text: ['Total due: 1234.56 EUR'] };

  it('round-trips a JSON value, with a fresh IV each time', () => {
    const first = encryptResult(value, key);
    const second = encryptResult(value, key);
    expect(first.alg).toBe('A256GCM');
    expect(first.ciphertext).not.toContain('Invoice');
    expect(first.iv).not.toBe(second.iv);
    expect(decryptResult(first, key)).toEqual(value);
  });

  it('refuses a wrong key and altered ciphertext', () => {
    const encrypted = encryptResult(value, key);
    expect(() => decryptResult(encrypted, randomBytes(32).toString('base64'))).toThrow();
    const bytes = Buffer.from(encrypted.ciphertext, 'base64');
    bytes[0] = (bytes[0] ?? 0) ^ 1;
    expect(() =>
      decryptResult({ ...encrypted, ciphertext: bytes.toString('base64') }, key),
    ).toThrow();
  });
});
