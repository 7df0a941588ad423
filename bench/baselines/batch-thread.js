/**
 * The thread side of bench/baselines/lean-batched.ts: runs a batch of task
 * requests one after another with corepool's own thread entry, and answers
 * all their responses in one message. Plain JavaScript: Piscina loads it as is.
 */
const { default: runInThread } = require('../../dist/workers/thread-entry.js');

module.exports = async function runBatch(batch) {
  const responses = [];
  for (const request of batch) responses.push(await runInThread(request));
  return responses;
};
