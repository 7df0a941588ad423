/**
 * Writes the table of layers in docs/architecture.md from .dependency-cruiser.js.
 *
 *   npm run docs:layers
 */
import { writeFileSync } from 'node:fs';
import { ARCHITECTURE, currentArchitecture } from './layer-rules';

writeFileSync(ARCHITECTURE, currentArchitecture());
process.stdout.write(`wrote the layer table of ${ARCHITECTURE}\n`);
