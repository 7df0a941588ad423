import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { EnvironmentVariables } from '../src/config/environment-variables';
import { MALLOC_DEFAULTS } from '../src/config/malloc-env';
import { copySources, parseDockerfile, type Instruction } from './support/dockerfile';
import { postJson } from './support/http-app';
import { startService, type ServiceProcess } from './support/service-process';

jest.setTimeout(240_000);

const ROOT = resolve(__dirname, '..');
const run = promisify(execFile);
const instructions = parseDockerfile(join(ROOT, 'Dockerfile'));
const runtimeStage = instructions.filter((i) => i.stage === 'runtime');
/** The workspaces' manifests the build and deps stages copy before `npm ci`. */
const PACKAGE_MANIFESTS = ['packages/core/package.json', 'packages/nestjs/package.json'];
const only = (list: Instruction[], keyword: string) => list.filter((i) => i.keyword === keyword);
/** The exec-form arguments of the runtime's HEALTHCHECK. */
const healthcheckCommand = (): string[] => {
  const healthcheck = only(runtimeStage, 'HEALTHCHECK')[0]!.args;
  return JSON.parse(healthcheck.slice(healthcheck.indexOf('CMD ') + 4)) as string[];
};

describe('Dockerfile (checked against the code; no Docker engine needed)', () => {
  it('is multi-stage on a slim Node LTS image, with the runtime stage last', () => {
    const froms = only(instructions, 'FROM');
    expect(froms.length).toBeGreaterThanOrEqual(2);
    const version = only(instructions, 'ARG').find((i) => i.args.startsWith('NODE_VERSION='));
    // Even major versions become LTS; the image must be one of them.
    expect(Number(version?.args.split('=')[1]?.split('.')[0]) % 2).toBe(0);
    for (const from of froms) expect(from.args).toMatch(/^node:\$\{NODE_VERSION\}-slim AS \w+$/);
    expect(froms.at(-1)!.args).toMatch(/ AS runtime$/);
  });

  it('pins the full Node.js version CI runs the whole suite on, of the line .nvmrc recommends', () => {
    const version = only(instructions, 'ARG')
      .find((i) => i.args.startsWith('NODE_VERSION='))
      ?.args.split('=')[1];
    // A floating tag (node:26-slim) would ship a runtime that no test ran on.
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    expect(/^NODE_PIN=(\S+)$/m.exec(ci)?.[1]).toBe(version);
    for (const file of ['.nvmrc', '.node-version']) {
      expect(readFileSync(join(ROOT, file), 'utf8').trim()).toBe(version?.split('.')[0]);
    }
  });

  it('copies only files that exist and that .dockerignore lets through', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    const stages = new Set(only(instructions, 'FROM').map((i) => / AS (\S+)$/.exec(i.args)?.[1]));
    for (const copy of only(instructions, 'COPY')) {
      const { from, sources } = copySources(copy.args);
      if (from !== undefined) {
        expect(stages).toContain(from);
        continue;
      }
      for (const source of sources) {
        expect({ source, exists: existsSync(join(ROOT, source)) }).toEqual({
          source,
          exists: true,
        });
        expect(ignored).not.toContain(source.replace(/^\.\//, ''));
      }
    }
  });

  it("ships only dist/, the packages' manifests and dist/, production dependencies and package.json", () => {
    const copies = only(runtimeStage, 'COPY').map((i) => copySources(i.args));
    expect(copies).toEqual([
      { from: undefined, sources: ['package.json'] },
      { from: 'deps', sources: ['/app/node_modules'] },
      { from: 'build', sources: ['/app/dist'] },
      { from: 'build', sources: ['/ship/packages'] },
    ]);
    const shipped = instructions.filter((i) => i.stage === 'build' && i.keyword === 'RUN');
    expect(
      shipped.some((i) =>
        /cp -r packages\/\$package\/package.json packages\/\$package\/dist/.test(i.args),
      ),
    ).toBe(true);
    const deps = instructions.filter((i) => i.stage === 'deps' && i.keyword === 'RUN');
    expect(deps.some((i) => /npm ci --omit=dev/.test(i.args))).toBe(true);
  });

  it('runs as a non-root user, in production mode, on the default port, with exec-form CMD', () => {
    const users = only(runtimeStage, 'USER');
    expect(users).toHaveLength(1);
    expect(users[0]!.args).not.toMatch(/^(root|0)(:|$)/);
    expect(
      only(runtimeStage, 'ENV')
        .map((i) => i.args)
        .join(' '),
    ).toMatch(/NODE_ENV=production/);
    const defaultPort = new EnvironmentVariables().PORT;
    // The admin port has no default; the image documents the one compose and Kubernetes set.
    const compose = parse(readFileSync(join(ROOT, 'deploy/compose/compose.yaml'), 'utf8')) as {
      services: { corepool: { environment: Record<string, string> } };
    };
    const adminPort = compose.services.corepool.environment.ADMIN_PORT;
    expect(only(runtimeStage, 'EXPOSE').map((i) => i.args)).toEqual([
      `${defaultPort} ${adminPort}`,
    ]);
    expect(
      only(runtimeStage, 'ENV')
        .map((i) => i.args)
        .join(' '),
    ).toMatch(new RegExp(`PORT=${defaultPort}\\b`));
    // The service listens on loopback by default; a container must listen beyond it.
    expect(
      only(runtimeStage, 'ENV')
        .map((i) => i.args)
        .join(' '),
    ).toMatch(/HOST=0\.0\.0\.0\b/);
    // A single process has no primary to give it the malloc settings: the image does.
    const env = only(runtimeStage, 'ENV')
      .map((i) => i.args)
      .join(' ');
    for (const [name, value] of Object.entries(MALLOC_DEFAULTS)) {
      expect(env).toMatch(new RegExp(`\\b${name}=${value}\\b`));
    }
    expect(JSON.parse(only(runtimeStage, 'CMD').at(-1)!.args)).toEqual(['node', 'dist/main.js']);
    expect(healthcheckCommand().join(' ')).toContain('/health/live');
  });

  describe('the runtime stage, reproduced in a clean directory', () => {
    let dir: string;
    let service: ServiceProcess | undefined;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'corepool-runtime-'));
      for (const file of ['package.json', 'package-lock.json', ...PACKAGE_MANIFESTS]) {
        cpSync(join(ROOT, file), join(dir, file));
      }
      await run('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline'], {
        cwd: dir,
        maxBuffer: 16 * 1024 * 1024,
      });
      const deps = only(instructions, 'RUN').filter((i) => i.stage === 'deps');
      // The optional packages the deps stage uninstalls by default (the gRPC exporter).
      for (const [, names] of deps.flatMap((i) => [
        ...i.args.matchAll(/npm uninstall --no-save [^;&]*?((?:@[\w.-]+\/)?[\w.-]+)\s*;/g),
      ])) {
        await run('npm', ['uninstall', '--no-save', '--omit=dev', '--prefer-offline', names!], {
          cwd: dir,
          maxBuffer: 16 * 1024 * 1024,
        });
      }
      // What the deps stage removes after its install (a dev tool npm keeps as an optional peer).
      for (const [, path] of deps.flatMap((i) => [...i.args.matchAll(/rm -rf (\S+)/g)])) {
        rmSync(join(dir, path!), { recursive: true, force: true });
      }
      cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
      // The build stage's /ship/packages: each package's manifest and dist/, no sources.
      for (const manifest of PACKAGE_MANIFESTS) {
        const folder = dirname(manifest);
        cpSync(join(ROOT, folder, 'dist'), join(dir, folder, 'dist'), { recursive: true });
      }
    });

    afterAll(async () => {
      await service?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('leaves out the optional gRPC exporter', () => {
      expect(existsSync(join(dir, 'node_modules/@opentelemetry/exporter-trace-otlp-grpc'))).toBe(
        false,
      );
      expect(existsSync(join(dir, 'node_modules/@grpc/grpc-js'))).toBe(false);
    });

    it('installs no development tools', () => {
      for (const devTool of ['typescript', 'jest', 'pino-pretty', '@nestjs/cli']) {
        expect({ devTool, installed: existsSync(join(dir, 'node_modules', devTool)) }).toEqual({
          devTool,
          installed: false,
        });
      }
    });

    it('starts dist/main.js, logs JSON, answers probes and tasks, and stops cleanly', async () => {
      // As in Kubernetes: one process per container; only what the image sets, plus the port.
      service = await startService(
        { CLUSTER_PROCESSES: '1', POOL_THREADS: '1', TASK_MODULES: '' },
        { cwd: dir },
      );
      expect(service.lines.length).toBeGreaterThan(0);
      for (const line of service.lines) expect(() => JSON.parse(line) as unknown).not.toThrow();

      expect((await fetch(`${service.url}/health/live`)).status).toBe(200);
      expect((await fetch(`${service.url}/health/ready`)).status).toBe(200);
      const task = await postJson(`${service.url}/api/tasks/factorial`, { n: 20 });
      expect(task.status).toBe(200);

      // The HEALTHCHECK command itself, as Docker would run it inside the container.
      const [command, ...args] = healthcheckCommand();
      expect(command).toBe('node');
      await expect(
        run(process.execPath, args, { cwd: dir, env: { PORT: String(service.port) } }),
      ).resolves.toBeDefined();

      service.child.kill('SIGTERM');
      expect(await service.exited).toEqual({ code: 0, signal: null });
    });
  });
});
