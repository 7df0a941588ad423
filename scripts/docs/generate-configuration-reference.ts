/**
 * Writes docs/configuration.md from the configuration's declarations.
 *
 *   npm run docs:config
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { EnvironmentVariables } from '../../src/config/environment-variables';
import { describeVariables, renderConfigurationReference } from './configuration-reference';

const ROOT = resolve(__dirname, '..', '..');
export const CONFIGURATION_SOURCE = resolve(ROOT, 'src', 'config', 'environment-variables.ts');
export const CONFIGURATION_REFERENCE = resolve(ROOT, 'docs', 'configuration.md');

/** The reference as the code declares it now. */
export function currentConfigurationReference(): string {
  const source = readFileSync(CONFIGURATION_SOURCE, 'utf8');
  return renderConfigurationReference(describeVariables(EnvironmentVariables, source));
}

if (require.main === module) {
  writeFileSync(CONFIGURATION_REFERENCE, currentConfigurationReference());
  process.stdout.write(`wrote ${CONFIGURATION_REFERENCE}\n`);
}
