// Prints jest's JSON results (one file per jest run: the suite, then the other
// Node.js line's smoke test) as the one line CI reads: "N passed, N failed".
// A suite that failed to load counts as a failure, so a broken file cannot hide.
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
