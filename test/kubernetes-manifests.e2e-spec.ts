import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PATH_METADATA } from '@nestjs/common/constants';
import { parseAllDocuments } from 'yaml';
import { EnvironmentVariables } from '../src/config/environment-variables';
import { loadConfig } from '../src/config/load-config';
import { MEMORY_PEAK_SHARE, worstAdmittedBytes } from '../src/config/memory-limits';
import { HealthController } from '../src/health/health.controller';

const DIR = resolve(__dirname, '../deploy/kubernetes');
/** Seconds Kubernetes must wait beyond the service's own shutdown budget. */
const MIN_MARGIN_SECONDS = 5;

type Manifest = Record<string, any>;

function load(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(join(DIR, file), 'utf8')).map(
    (document) => document.toJS() as Manifest,
  );
}

const files = readdirSync(DIR).filter((file) => file.endsWith('.yaml'));
const applied = load('kustomization.yaml')[0]!.resources as string[];
const manifests = applied.flatMap(load);
const ofKind = (kind: string) => manifests.filter((manifest) => manifest.kind === kind);
const deployment = ofKind('Deployment')[0]!;
const pod = deployment.spec.template.spec;
const container = pod.containers[0];
const env: Record<string, string> = Object.fromEntries(
  (container.env as Array<{ name: string; value: string }>).map((v) => [v.name, String(v.value)]),
);

/** The route a Nest handler is mapped to, read from its decorators. */
function routeOf(handler: (...args: never[]) => unknown): string {
  const base = Reflect.getMetadata(PATH_METADATA, HealthController) as string;
  const path = Reflect.getMetadata(PATH_METADATA, handler) as string;
  return `/${[base, path].filter((part) => part !== '/' && part !== '').join('/')}`;
}

function cpuCores(quantity: string): number {
  return quantity.endsWith('m') ? Number(quantity.slice(0, -1)) / 1000 : Number(quantity);
}

function mebibytes(quantity: string): number {
  const units: Record<string, number> = { Ki: 1 / 1024, Mi: 1, Gi: 1024 };
  const match = /^(\d+)(Ki|Mi|Gi)$/.exec(quantity);
  if (match === null) throw new Error(`unsupported memory quantity ${quantity}`);
  return Number(match[1]) * units[match[2]!]!;
}

describe('Kubernetes manifests (deploy/kubernetes) agree with the code', () => {
  it('parses every manifest, and applies the Deployment, Service, HPA and PDB', () => {
    for (const file of files) expect(() => load(file)).not.toThrow();
    expect(manifests.map((manifest) => manifest.kind).sort()).toEqual([
      'Deployment',
      'HorizontalPodAutoscaler',
      'PodDisruptionBudget',
      'Service',
    ]);
  });

  it('sets only variables the service reads, with values it accepts, one process per pod', () => {
    const known = [...Object.keys(new EnvironmentVariables()), 'AUTH_API_KEYS_FILE', 'ADMIN_PORT'];
    for (const name of Object.keys(env)) expect(known).toContain(name);
    expect(() => loadConfig(env, { cores: 64, stdoutIsTty: false, cwd: '/app' })).not.toThrow();
    expect(env.CLUSTER_PROCESSES).toBe('1');
  });

  it('probes the contract paths on the container port', () => {
    const port = container.ports[0];
    expect(port).toEqual({ name: 'http', containerPort: new EnvironmentVariables().PORT });
    // Probes stay on the public port: ADMIN_PORT takes only /metrics and the detailed /health.
    expect(container.startupProbe.httpGet).toEqual({
      path: routeOf(HealthController.prototype.live),
      port: 'http',
    });
    expect(container.livenessProbe.httpGet).toEqual({
      path: routeOf(HealthController.prototype.live),
      port: 'http',
    });
    expect(container.readinessProbe.httpGet).toEqual({
      path: routeOf(HealthController.prototype.ready),
      port: 'http',
    });
    expect(routeOf(HealthController.prototype.live)).toBe('/health/live');
    expect(routeOf(HealthController.prototype.ready)).toBe('/health/ready');
  });

  it('authenticates every caller with API keys from a Secret mounted as a directory', () => {
    const config = loadConfig(env, { cores: 64, stdoutIsTty: false, cwd: '/app' });
    expect(config.auth.mode).toBe('api-key');
    const file = config.auth.apiKeysFile!;
    const mount = (container.volumeMounts as Manifest[]).find((m) =>
      file.startsWith(`${m.mountPath}/`),
    );
    expect(mount).toMatchObject({ readOnly: true });
    // A subPath mount would never see the Secret's updates: rotation needs the directory.
    expect(mount!.subPath).toBeUndefined();
    const volume = (pod.volumes as Manifest[]).find((v) => v.name === mount!.name);
    expect(volume!.secret.secretName).toEqual(expect.any(String));
  });

  it('serves metrics on the admin port, which Prometheus scrapes and the Service does not expose', () => {
    const config = loadConfig(env, { cores: 64, stdoutIsTty: false, cwd: '/app' });
    expect(config.http.adminPort).toBeDefined();
    expect(container.ports).toContainEqual({ name: 'admin', containerPort: config.http.adminPort });
    expect(deployment.spec.template.metadata.annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(config.http.adminPort),
      'prometheus.io/path': '/metrics',
    });
    const [service] = ofKind('Service');
    const servicePorts = service!.spec.ports as Manifest[];
    expect(servicePorts.map((port) => port.targetPort as string)).toEqual(['http']);
    expect(config.http.docsEnabled).toBe(false);
  });

  it('gives the shutdown its whole budget, with margin, after the preStop wait', () => {
    const config = loadConfig(env, { cores: 64, stdoutIsTty: false, cwd: '/app' });
    const [command, seconds] = container.lifecycle.preStop.exec.command as string[];
    expect(command).toBe('sleep');
    const needed = Number(seconds) + (config.shutdown.delayMs + config.shutdown.timeoutMs) / 1000;
    console.log(
      `grace ${pod.terminationGracePeriodSeconds} s; preStop ${seconds} s + delay ${config.shutdown.delayMs} ms + budget ${config.shutdown.timeoutMs} ms = ${needed} s`,
    );
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(needed + MIN_MARGIN_SECONDS);
  });

  it('reserves one core per worker thread, and keeps the worst admitted mix within 85 % of the memory limit', () => {
    const { requests, limits } = container.resources;
    // The pod reads its limit from its cgroup: the memory settings follow from it.
    const memoryBytes = mebibytes(limits.memory) * 1024 ** 2;
    const config = loadConfig(env, { cores: 64, stdoutIsTty: false, cwd: '/app', memoryBytes });
    expect(cpuCores(requests.cpu)).toBe(config.pool.threads);
    expect(cpuCores(limits.cpu)).toBe(config.pool.threads);
    // The worst mix it admits (test/memory-limit.e2e-spec.ts measures it): within 85 % of the limit.
    const worst = worstAdmittedBytes(
      {
        bodyBudgetBytes: config.http.bodyMemoryBudgetBytes,
        threadMemoryMb: config.pool.maxMemoryMb,
        heapCapMb: config.pool.maxOldGenerationMb,
      },
      config.pool.threads,
    );
    expect(config.cluster.processes * worst).toBeLessThanOrEqual(MEMORY_PEAK_SHARE * memoryBytes);
    expect(mebibytes(requests.memory)).toBe(mebibytes(limits.memory));
  });

  it('points the Service, HPA and PDB at the Deployment’s pods', () => {
    const labels = deployment.spec.template.metadata.labels;
    const [service] = ofKind('Service');
    expect(labels).toMatchObject(service!.spec.selector);
    expect(service!.spec.ports[0].targetPort).toBe('http');
    expect(labels).toMatchObject(ofKind('PodDisruptionBudget')[0]!.spec.selector.matchLabels);
    expect(deployment.spec.selector.matchLabels).toEqual(
      ofKind('PodDisruptionBudget')[0]!.spec.selector.matchLabels,
    );
    for (const hpa of [...ofKind('HorizontalPodAutoscaler'), ...load('hpa-queue.example.yaml')]) {
      expect(hpa.spec.scaleTargetRef).toEqual({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: deployment.metadata.name,
      });
    }
  });

  it('scales the queue example on the pool queue metric the service exports', () => {
    const [example] = load('hpa-queue.example.yaml');
    const metrics = example!.spec.metrics as Manifest[];
    const pods = metrics.find((metric) => metric.type === 'Pods')!;
    expect(pods.pods.metric.name).toBe('compute_pool_queue_size');
  });
});
