import { unsupportedNodeMessage } from './supported-node';

// Imported first by main.ts, before any module that an older Node.js cannot
// load (node:sqlite, NestJS's ES modules): one line instead of a stack trace.
const unsupported = unsupportedNodeMessage(process.versions.node);
if (unsupported !== undefined) {
  process.stderr.write(`${unsupported}\n`);
  process.exit(1);
}
