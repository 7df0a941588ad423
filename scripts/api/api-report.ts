/**
 * Checks (or, with --update, rewrites) the API report of every public entry point of the
 * packages: one API Extractor config per entry point, packages/<name>/api-extractor*.json,
 * each comparing the built .d.ts (npm run build:packages) with its packages/<name>/etc/*.api.md.
 *
 *   npm run api:check    fails when a public API differs from its checked-in report
 *   npm run api:update   writes the reports; commit them with the change (docs/releasing.md)
 */
import { globSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CompilerState, Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = join(__dirname, '..', '..');
const update = process.argv.includes('--update');

const configs = globSync('packages/*/api-extractor*.json', { cwd: root })
  .sort()
  .map((file) => ExtractorConfig.loadFileAndPrepare(join(root, file)));

// One TypeScript program for all the entry points: the compiler is most of each run's time.
const [first] = configs;
if (first === undefined) throw new Error('no packages/*/api-extractor*.json found');
const compilerState = CompilerState.create(first, {
  additionalEntryPoints: configs.map((config) => config.mainEntryPointFilePath),
});

const failed: string[] = [];
for (const config of configs) {
  const report = relative(root, config.reportFilePath);
  // Not a local build unless updating: then a warning fails the check too, and a changed
  // report is an error instead of being written over.
  const result = Extractor.invoke(config, {
    localBuild: update,
    compilerState,
    printApiReportDiff: !update,
  });
  if (!result.succeeded) failed.push(report);
  else if (update && result.apiReportChanged) process.stdout.write(`updated ${report}\n`);
}

if (failed.length > 0) {
  process.stderr.write(
    `\nAPI check failed for ${failed.join(', ')}.\n` +
      'If the public API change is intended: npm run api:update, commit the report, and add a ' +
      'changeset (docs/releasing.md). Warnings above must be fixed in the TSDoc comments.\n',
  );
  process.exitCode = 1;
}
