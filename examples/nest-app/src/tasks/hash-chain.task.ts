// The task file the pool's threads load, compiled by this app's own build
// (src/tasks/hash-chain.task.ts → dist/tasks/hash-chain.task.js). It imports
// nothing from Nest: a thread starts in milliseconds, without the framework.
import { createHash } from 'node:crypto';
import { defineTask, inputSchema, integer, string } from '@corepool/core/task';

export interface HashChainInput {
  readonly rounds: number;
  readonly seed: string;
}

/** SHA-256 applied `rounds` times over its own digest: pure CPU, its cost grows with `rounds`. */
export const hashChain = defineTask({
  name: 'hash-chain',
  description: 'SHA-256 applied `rounds` times to a seed',
  input: inputSchema<HashChainInput>('HashChainInput', {
    rounds: integer({ minimum: 1, maximum: 100_000_000 }),
    seed: string({ maxLength: 1024 }, { default: 'corepool' }),
  }),
  limits: { rounds: 100_000_000 },
  // The scheduler learns the time per round, so a request 40 × larger is
  // expected to take 40 × longer and is refused if its deadline cannot hold it.
  size: ({ rounds }) => rounds,
  run({ rounds, seed }, _body, context) {
    let digest = Buffer.from(seed);
    for (let round = 0; round < rounds; round++) {
      // A cheap check every ~1 ms of work: a cancelled task (client gone,
      // deadline passed) stops here and its thread lives on.
      if (round % 1000 === 0) context.throwIfCancelled();
      digest = createHash('sha256').update(digest).digest();
    }
    return { digest: digest.toString('hex'), rounds };
  },
});
