// The tools of test/openapi-client.e2e-spec.ts, ES modules (or needing them)
// that jest's CommonJS loader cannot load: validates an OpenAPI document with
// swagger-parser, lints it with Redocly's rules (redocly.yaml) and writes the
// TypeScript types openapi-typescript generates from it. Prints, as JSON, the
// validation's error (null when valid) and the lint's problems.
//
//   node test/support/openapi-tools.mjs <document.json> <types.d.ts>
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import SwaggerParser from '@apidevtools/swagger-parser';
import { lintFromString, loadConfig } from '@redocly/openapi-core';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';

const [documentPath, typesPath] = process.argv.slice(2);
if (documentPath === undefined || typesPath === undefined) {
  throw new Error('usage: openapi-tools.mjs <document.json> <types.d.ts>');
}
const source = readFileSync(documentPath, 'utf8');

let invalid = null;
try {
  await SwaggerParser.validate(JSON.parse(source));
} catch (error) {
  invalid = error instanceof Error ? error.message : String(error);
}

const config = await loadConfig({
  configPath: fileURLToPath(new URL('../../redocly.yaml', import.meta.url)),
});
const problems = await lintFromString({ source, absoluteRef: documentPath, config });

// Bytes are sent and received as Blobs, as fetch takes and gives them.
const BLOB = ts.factory.createTypeReferenceNode('Blob');
const types = await openapiTS(JSON.parse(source), {
  transform: (schema) => (schema.format === 'binary' ? BLOB : undefined),
});
writeFileSync(typesPath, astToString(types));

console.log(
  JSON.stringify({
    invalid,
    problems: problems.map(({ ruleId, severity, message, location }) => ({
      ruleId,
      severity,
      message,
      pointer: location[0]?.pointer,
    })),
  }),
);
