import type * as Crypto from 'node:crypto';
import { defineTask } from '@corepool/core/task';
import { inputSchema, oneOf } from '@corepool/core/task';

// No bound of its own: hashing is linear and fast, well under a second on one core even at the
// server body limit, for every algorithm (ADR 0050 has the times).
const ALGORITHMS = ['sha256', 'sha512', 'sha3-256', 'blake2b512'] as const;

let crypto: typeof Crypto | undefined;
/** Loaded on first use: node:crypto slows a thread's start, and most threads never hash (ADR 0050). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadCrypto = (): typeof Crypto => (crypto ??= require('node:crypto') as typeof Crypto);

/** Query string of the `hash` task. */
export interface HashInput {
  algorithm: (typeof ALGORITHMS)[number];
}

export const hashInput = inputSchema<HashInput>('HashInput', {
  algorithm: oneOf(ALGORITHMS, { default: 'sha256', description: 'Digest algorithm.' }),
});

/** Result of the `hash` task. */
export interface HashOutput {
  algorithm: string;
  /** Length of the hashed body. */
  bytes: number;
  /** Hex digest. */
  digest: string;
}

/** Hashes the raw request body. */
export const hashTask = defineTask<HashInput, HashOutput>({
  name: 'hash',
  description: `Hashes the raw request body with ${ALGORITHMS.join(', ')}; returns the hex digest.`,
  input: hashInput,
  binary: { contentTypes: ['application/octet-stream'] },
  size: (_input, body) => body?.byteLength ?? 0,
  // Each algorithm has its own time per byte.
  costClass: ({ algorithm }) => algorithm,
  limits: { algorithms: ALGORITHMS.join(', '), maxBodyBytes: 'the server body limit' },
  run({ algorithm }, body) {
    // An absent body hashes like an empty one: the digest of nothing is well defined.
    const data = body ?? new Uint8Array(0);
    return {
      algorithm,
      bytes: data.byteLength,
      digest: loadCrypto().createHash(algorithm).update(data).digest('hex'),
    };
  },
});
