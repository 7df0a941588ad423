/**
 * Writes docs/configuration.md from the configuration's declarations.
 *
 *   npm run docs:config
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { VARIABLE_GROUPS } from '../../src/config/environment-variables';
import { describeVariables, renderConfigurationReference } from './configuration-reference';

const ROOT = resolve(__dirname, '..', '..');
/** One file per area, each declaring one class of variables. */
export const CONFIGURATION_SOURCES = resolve(ROOT, 'src', 'config', 'variables');
export const CONFIGURATION_REFERENCE = resolve(ROOT, 'docs', 'configuration.md');

/** The source of the file in CONFIGURATION_SOURCES that declares `className`. */
function sourceOf(className: string): string {
  const declares = new RegExp(String.raw`^export class ${className}\b`, 'm');
  const sources = readdirSync(CONFIGURATION_SOURCES)
    .filter((file) => file.endsWith('.variables.ts'))
    .map((file) => readFileSync(join(CONFIGURATION_SOURCES, file), 'utf8'))
    .filter((source) => declares.test(source));
  if (sources.length !== 1) {
    throw new Error(`${sources.length} files in ${CONFIGURATION_SOURCES} declare ${className}`);
  }
  return sources[0]!;
}

/** The reference as the code declares it now. */
export function currentConfigurationReference(): string {
  return renderConfigurationReference(
    VARIABLE_GROUPS.flatMap((group) => describeVariables(group, sourceOf(group.name))),
  );
}

if (require.main === module) {
  writeFileSync(CONFIGURATION_REFERENCE, currentConfigurationReference());
  process.stdout.write(`wrote ${CONFIGURATION_REFERENCE}\n`);
}
