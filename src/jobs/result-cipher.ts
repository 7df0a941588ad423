import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** An AES-256-GCM encrypted JSON value; every field base64. */
export interface EncryptedResult {
  readonly alg: 'A256GCM';
  readonly iv: string;
  readonly tag: string;
  readonly ciphertext: string;
}

const IV_BYTES = 12;

/**
 * Encrypts a JSON-serialisable value with AES-256-GCM: a fresh 96-bit IV per
 * value, the 128-bit tag authenticates the ciphertext. Whoever holds the key
 * decrypts with any standard AES-GCM implementation (see `decryptResult`).
 */
export function encryptResult(value: unknown, keyBase64: string): EncryptedResult {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(keyBase64, 'base64'), iv);
  const plaintext = Buffer.from(JSON.stringify(value) ?? 'null', 'utf8');
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return {
    alg: 'A256GCM',
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    ciphertext: ciphertext.toString('base64'),
  };
}

/** The inverse of `encryptResult`; throws when the key is wrong or the data was altered. */
export function decryptResult(encrypted: EncryptedResult, keyBase64: string): unknown {
  const decipher = createDecipheriv(
    'aes-256-gcm',
    Buffer.from(keyBase64, 'base64'),
    Buffer.from(encrypted.iv, 'base64'),
  );
  decipher.setAuthTag(Buffer.from(encrypted.tag, 'base64'));
  const plaintext = Buffer.concat([
    decipher.update(Buffer.from(encrypted.ciphertext, 'base64')),
    decipher.final(),
  ]);
  return JSON.parse(plaintext.toString('utf8')) as unknown;
}
