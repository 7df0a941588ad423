'use strict';
// The Piscina thread of the Nest + Piscina peer: the Nest example's own
// compiled task (examples/nest-app/dist/tasks/hash-chain.task.js), called
// directly, with nothing of corepool's pool around it.
const { setPriority } = require('node:os');
const { workerData } = require('node:worker_threads');
const { hashChain } = require(workerData.taskFile);

// As corepool's threads do by default (the bench gives both the same priority,
// so that only the framework and the pool differ).
if (workerData.niceIncrement > 0) setPriority(workerData.niceIncrement);

/** What a task's `run` gets as its context; nothing is ever cancelled here. */
const context = {
  signal: new AbortController().signal,
  throwIfCancelled() {},
  progress() {},
  addEvent() {},
  startSpan: () => ({ setAttribute() {}, addEvent() {}, end() {} }),
};

module.exports = (input) => hashChain.run(input, undefined, context);
