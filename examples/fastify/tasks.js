'use strict';
// The task module the pool's threads load. It imports nothing but the core:
// a thread starts in milliseconds, without Fastify.
const { createHash } = require('node:crypto');
const { defineTask, inputSchema, integer, string } = require('@corepool/core/task');

/** SHA-256 applied `rounds` times over its own digest: pure CPU, its cost grows with `rounds`. */
const hashChain = defineTask({
  name: 'hash-chain',
  description: 'SHA-256 applied `rounds` times to a seed',
  input: inputSchema('HashChainInput', {
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

module.exports = { hashChain };
