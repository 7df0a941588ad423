import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { MINIMUM_NODE_MAJOR, NODE_INSTALL_HINT, unsupportedNodeMessage } from './supported-node';

describe(unsupportedNodeMessage.name, () => {
  it('names the version found, the floor and where to get Node.js, on one line', () => {
    expect(unsupportedNodeMessage('20.19.0')).toBe(
      'corepool needs Node.js 24 or later; this is Node.js 20.19.0. How to get it: README.md, "Quick start".',
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

  it('points to a section of the README that says how to get Node.js', () => {
    const [file, heading] = /^(.+), "(.+)"$/.exec(NODE_INSTALL_HINT)?.slice(1) ?? [];
    expect(file).toBe('README.md');
    const readme = readFileSync(resolve(__dirname, '../..', file ?? ''), 'utf8');
    const start = readme.split('\n').findIndex((line) => line === `## ${heading ?? ''}`);
    expect(start).toBeGreaterThan(-1);
    const section = readme.split('\n').slice(start + 1);
    const end = section.findIndex((line) => line.startsWith('## '));
    expect(section.slice(0, end).join('\n')).toContain('Getting Node.js');
  });
});
