import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { KeyFile } from './support/credentials';
import { startService, type ServiceProcess } from './support/service-process';

jest.setTimeout(120_000);

const run = promisify(execFile);
const TOOLS = resolve(__dirname, 'support/openapi-tools.mjs');
const CLIENT = resolve(__dirname, 'fixtures/openapi-client/client.mts');
const KEY = 'openapi-client-key';

interface LintProblem {
  readonly ruleId: string;
  readonly severity: string;
  readonly message: string;
  readonly pointer?: string;
}

/** The document a running service serves, as its users fetch it. */
async function documentOf(service: ServiceProcess, headers: Record<string, string> = {}) {
  const response = await fetch(`${service.url}/docs-json`, { headers });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, any>;
}

/**
 * Validates the document (swagger-parser), lints it with redocly.yaml's rules and
 * writes its generated types: the validation's error, the lint's problems, the types' file.
 */
async function checkAndGenerate(
  document: object,
  dir: string,
): Promise<{ invalid: string | null; problems: LintProblem[]; types: string }> {
  const documentPath = join(dir, 'openapi.json');
  const types = join(dir, 'corepool-api.d.ts');
  writeFileSync(documentPath, JSON.stringify(document));
  const { stdout } = await run(process.execPath, [TOOLS, documentPath, types]);
  const checked = JSON.parse(stdout) as { invalid: string | null; problems: LintProblem[] };
  return { ...checked, types };
}

/** The checked-in client, type-checked against the generated types as strictly as the project's code. */
function typeErrors(types: string): string[] {
  const program = ts.createProgram([CLIENT], {
    strict: true,
    noUncheckedIndexedAccess: true,
    noUnusedLocals: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts'],
    types: ['node'],
    paths: { 'corepool-api': [types] },
  });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (diagnostic.file === undefined || diagnostic.start === undefined) return message;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `${diagnostic.file.fileName}:${line + 1}: ${message}`;
  });
}

describe('OpenAPI document and a client generated from it', () => {
  const keys = new KeyFile({
    client: { key: KEY, scopes: ['tasks:run', 'jobs:read', 'jobs:write'] },
  });
  const dir = mkdtempSync(join(tmpdir(), 'corepool-openapi-'));
  let withKeys: ServiceProcess;
  let open: ServiceProcess;

  beforeAll(async () => {
    [withKeys, open] = await Promise.all([
      startService({ AUTH_MODE: 'api-key', AUTH_API_KEYS_FILE: keys.path }),
      startService(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([withKeys?.stop(), open?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('is valid, passes the lint, and a typed client runs against the service', async () => {
    const document = await documentOf(withKeys, { 'x-api-key': KEY });
    const { invalid, problems, types } = await checkAndGenerate(document, dir);
    expect(invalid).toBeNull();
    expect(problems).toEqual([]);
    expect(typeErrors(types)).toEqual([]);

    const { stdout } = await run(process.execPath, [CLIENT, withKeys.url, KEY]);
    const answers = JSON.parse(stdout) as Record<string, any>;
    expect(answers.factorial).toMatchObject({
      status: 200,
      result: { n: 20, digits: '2432902008176640000' },
    });
    expect(answers.refused).toEqual({
      status: 400,
      code: 'VALIDATION_FAILED',
      errors: ['n'],
    });
    expect(answers.hash).toMatchObject({
      status: 200,
      result: { digest: createHash('sha3-256').update('corepool').digest('hex') },
    });
    expect(answers.submitted).toMatchObject({ status: 202 });
    expect(answers.submitted.location).toBe(answers.submitted.links.self);
    expect(answers.job.status).toBe(200);
    expect(answers.unauthenticated).toEqual({ status: 401, code: 'UNAUTHENTICATED' });
  });

  it('declares the schemes of the auth mode, and answers each route may give', async () => {
    const document = await documentOf(withKeys, { 'x-api-key': KEY });
    expect(Object.keys(document.components.securitySchemes)).toEqual(['apiKey', 'bearer']);
    expect(document.paths['/health/live'].get.security).toEqual([]);
    const submit = document.paths['/api/jobs'].post;
    expect(Object.keys(submit.responses)).toEqual(expect.arrayContaining(['200', '202', '503']));
    expect(submit.responses['201']).toBeUndefined();
    const run = document.paths['/api/tasks/factorial'].post;
    expect(run.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/FactorialInput',
    });
    expect(run.responses['503']).toEqual({
      $ref: '#/components/responses/PoolSaturatedOrShuttingDown',
    });
    const saturated = document.components.responses.PoolSaturatedOrShuttingDown;
    expect(Object.keys(saturated.headers)).toContain('retry-after');
    expect(run.parameters).toEqual(
      expect.arrayContaining([{ $ref: '#/components/parameters/RequestTimeoutMs' }]),
    );
    expect(document.components.parameters.EnvoyExpectedRqTimeoutMs.name).toBe(
      'x-envoy-expected-rq-timeout-ms',
    );
  });

  it('without authentication, is valid and passes the lint, with no scheme', async () => {
    const document = await documentOf(open);
    expect(document.components.securitySchemes).toBeUndefined();
    expect(document.security).toEqual([]);
    const { invalid, problems } = await checkAndGenerate(document, mkdtempSync(join(dir, 'open-')));
    expect(invalid).toBeNull();
    expect(problems).toEqual([]);
  });
});
