import { resolve } from 'node:path';
import { BUILT_MAIN, launchProcess } from './support/service-process';

const PRETEND_NODE_20 = resolve(__dirname, 'fixtures/pretend-node-20.js');

describe('the service on an unsupported Node.js', () => {
  it('exits 1 with one line naming the version, the floor and where to get Node.js', async () => {
    const service = await launchProcess({
      label: 'on Node.js 20',
      args: ['--require', PRETEND_NODE_20, BUILT_MAIN],
      readyPath: null,
    });
    expect(await service.exited).toEqual({ code: 1, signal: null });
    expect(service.lines.filter((line) => line !== '')).toEqual([
      'corepool needs Node.js 24 or later; this is Node.js 20.19.0. How to get it: README.md, "Quick start".',
    ]);
  });
});
