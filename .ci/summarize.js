// Prints jest's JSON results as the one line CI reads: "N passed, N failed".
// A suite that failed to load counts as a failure, so a broken file cannot hide.
'use strict';
const { readFileSync } = require('node:fs');

const file = process.argv[2];
let results;
try {
  results = JSON.parse(readFileSync(file, 'utf8'));
} catch {
  console.log('0 passed, 1 failed');
  console.error(`no jest results in ${file}: the build or jest itself failed`);
  process.exit(1);
}
const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
const skipped = results.numPendingTests + results.numTodoTests;
for (const suite of results.testResults) {
  if (suite.status === 'failed' && suite.assertionResults.length === 0) {
    console.error(`suite failed to run: ${suite.name}\n${suite.message}`);
  }
}
console.log(
  `${results.numPassedTests} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`,
);
process.exit(failed > 0 || results.numPassedTests === 0 ? 1 : 0);
