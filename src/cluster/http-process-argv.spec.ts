import { httpProcessExecArgv } from './http-process-argv';

describe(httpProcessExecArgv.name, () => {
  it('adds the semi-space to the primary’s own options', () => {
    expect(httpProcessExecArgv(['--enable-source-maps'], 4)).toEqual([
      '--enable-source-maps',
      '--max-semi-space-size=4',
    ]);
  });

  it('leaves V8’s default with 0', () => {
    expect(httpProcessExecArgv(['--enable-source-maps'], 0)).toEqual(['--enable-source-maps']);
  });

  it('keeps a semi-space the primary was started with, in either spelling', () => {
    expect(httpProcessExecArgv(['--max-semi-space-size=32'], 4)).toEqual([
      '--max-semi-space-size=32',
    ]);
    expect(httpProcessExecArgv(['--max-semi-space-size', '32'], 4)).toEqual([
      '--max-semi-space-size',
      '32',
    ]);
  });
});
