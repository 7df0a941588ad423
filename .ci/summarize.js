// Prints jest's JSON results (one file per jest run: the suite, the other
// Node.js line's smoke test, then each example's own tests against the packed
// packages) as the one line CI reads: "N passed, N failed". A suite that
// failed to load counts as a failure, and so does a missing results file (an
// example that failed to install or build), so a broken file cannot hide.
'use strict';
const { readFileSync } = require('node:fs');

let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of process.argv.slice(2)) {
  let results;
  try {
    results = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    console.error(`no jest results in ${file}: the build or jest itself failed`);
    failed += 1;
    continue;
  }
  passed += results.numPassedTests;
  failed += results.numFailedTests + results.numRuntimeErrorTestSuites;
  skipped += results.numPendingTests + results.numTodoTests;
  for (const suite of results.testResults) {
    if (suite.status === 'failed' && suite.assertionResults.length === 0) {
      console.error(`suite failed to run: ${suite.name}\n${suite.message}`);
    }
  }
}
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
