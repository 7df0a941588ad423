import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { MINIMUM_NODE_MAJOR, unsupportedNodeMessage } from './supported-node';

describe(unsupportedNodeMessage.name, () => {
  it('names the version found, the floor and where to get Node.js, on one line', () => {
    expect(unsupportedNodeMessage('20.19.0')).toBe(
      'corepool needs Node.js 24 or later; this is Node.js 20.19.0. How to get it: README.md, "Requirements".',
    );
    expect(unsupportedNodeMessage('22.16.0')).toContain('this is Node.js 22.16.0');
  });

  it('accepts the 24 and 26 LTS lines', () => {
    for (const version of ['24.0.0', '24.22.3', '26.12.1']) {
      expect(unsupportedNodeMessage(version)).toBeUndefined();
    }
  });

  it('has the floor package.json states in engines, which npm enforces (engine-strict)', () => {
    const root = resolve(__dirname, '../..');
    const manifest = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as {
      engines: { node: string };
    };
    expect(manifest.engines.node).toBe(`>=${MINIMUM_NODE_MAJOR}`);
    expect(readFileSync(resolve(root, '.npmrc'), 'utf8')).toMatch(/^engine-strict=true$/m);
  });
});
