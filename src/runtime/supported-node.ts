/**
 * The oldest Node.js corepool runs on, as `engines` in package.json says: the
 * 24 LTS line (ADR 0046). Its SQLite job store needs `node:sqlite` with
 * `isOpen` and the `timeout` option, and NestJS 12 is loaded through
 * `require(esm)`.
 */
export const MINIMUM_NODE_MAJOR = 24;

/** Where the README says how to get a supported Node.js: its section, by heading. */
export const NODE_INSTALL_HINT = 'README.md, "Quick start"';

/** The line to print on an unsupported Node.js (`version` as in `process.versions.node`), else undefined. */
export function unsupportedNodeMessage(version: string): string | undefined {
  const major = Number(version.split('.')[0]);
  if (major >= MINIMUM_NODE_MAJOR) return undefined;
  return (
    `corepool needs Node.js ${MINIMUM_NODE_MAJOR} or later; this is Node.js ${version}. ` +
    `How to get it: ${NODE_INSTALL_HINT}.`
  );
}
