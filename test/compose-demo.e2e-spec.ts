import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';

// The compose demo cannot be started here (no container engine in CI): these checks read its
// files and hold together what each service must agree on with the next. Prometheus's own
// config is checked by promtool in prometheus.e2e-spec.ts.
const DIR = resolve(__dirname, '../deploy/compose');

type Yaml = Record<string, any>;
const read = (file: string): Yaml => parse(readFileSync(join(DIR, file), 'utf8')) as Yaml;

const compose = read('compose.yaml');
const services = compose.services as Record<string, Yaml>;
const collector = read('otel-collector.yaml');
const jaeger = read('jaeger.yaml');
const datasources = read('grafana/provisioning/datasources/prometheus.yml').datasources as Yaml[];

/** `host:port` of a URL or an endpoint written without a scheme. */
const hostPort = (endpoint: string) => {
  const url = new URL(endpoint.includes('://') ? endpoint : `tcp://${endpoint}`);
  return { host: url.hostname, port: url.port };
};

/** Every component a pipeline names is configured, and every configured one is in a pipeline. */
function expectPipelinesComplete(config: Yaml): void {
  for (const pipeline of Object.values(config.service.pipelines as Record<string, Yaml>)) {
    for (const kind of ['receivers', 'processors', 'exporters']) {
      for (const name of (pipeline[kind] as string[] | undefined) ?? []) {
        expect({ kind, name, configured: name in (config[kind] ?? {}) }).toMatchObject({
          configured: true,
        });
      }
    }
  }
  for (const name of (config.service.extensions as string[] | undefined) ?? []) {
    expect(config.extensions).toHaveProperty([name]);
  }
}

describe('the compose demo (deploy/compose)', () => {
  it('runs images pinned to a release: Prometheus 3, Jaeger 2, current Grafana and Collector', () => {
    const images = Object.fromEntries(
      Object.entries(services)
        .filter(([, service]) => service.image !== undefined)
        .map(([name, service]) => [name, String(service.image)]),
    );
    for (const image of Object.values(images)) expect(image).toMatch(/:v?\d+\.\d+\.\d+$/);
    expect(images.prometheus).toMatch(/^prom\/prometheus:v3\./);
    // Jaeger 2 is the `jaeger` image; `all-in-one` is the retired v1 line.
    expect(images.jaeger).toMatch(/^jaegertracing\/jaeger:2\./);
    expect(images.grafana).toMatch(/^grafana\/grafana:1[3-9]\./);
    const collectorMinor = Number(
      /collector-contrib:0\.(\d+)\./.exec(images['otel-collector']!)?.[1],
    );
    // From 0.144 the gRPC exporter is `otlp_grpc`, which otel-collector.yaml names.
    expect(collectorMinor).toBeGreaterThanOrEqual(144);
  });

  it('mounts only files that exist, each provisioning its service', () => {
    const mounted = Object.values(services).flatMap((service) =>
      ((service.volumes as string[] | undefined) ?? [])
        .map((volume) => volume.split(':')[0]!)
        .filter((source) => source.startsWith('.')),
    );
    // secrets/ is what make-keys.sh writes; it is not committed.
    for (const source of mounted.filter((file) => !file.startsWith('./secrets/'))) {
      expect({ source, exists: existsSync(join(DIR, source)) }).toEqual({ source, exists: true });
    }
    expect(mounted).toEqual(
      expect.arrayContaining(['./otel-collector.yaml', './jaeger.yaml', './prometheus.yml']),
    );
  });

  it('sends spans from corepool through the collector to Jaeger, on ports each one listens on', () => {
    expectPipelinesComplete(collector);
    expectPipelinesComplete(jaeger);

    // corepool → the collector's OTLP/HTTP receiver.
    const sent = hostPort(services.corepool!.environment.OTEL_EXPORTER_OTLP_ENDPOINT as string);
    expect(sent.host).toBe('otel-collector');
    expect(hostPort(collector.receivers.otlp.protocols.http.endpoint as string).port).toBe(
      sent.port,
    );

    // The collector → Jaeger's OTLP/gRPC receiver.
    const [exporterName] = collector.service.pipelines.traces.exporters as string[];
    expect(exporterName).toMatch(/^otlp_grpc\//);
    const forwarded = hostPort(collector.exporters[exporterName!].endpoint as string);
    expect(forwarded.host).toBe('jaeger');
    const jaegerOtlp = hostPort(jaeger.receivers.otlp.protocols.grpc.endpoint as string);
    expect(jaegerOtlp).toEqual({ host: '0.0.0.0', port: forwarded.port });

    // Jaeger stores what it receives where its UI reads.
    const backends = Object.keys(jaeger.extensions.jaeger_storage.backends as Yaml);
    expect(backends).toContain(jaeger.exporters.jaeger_storage_exporter.trace_storage);
    expect(backends).toContain(jaeger.extensions.jaeger_query.storage.traces);
  });

  it("gives Grafana Jaeger's UI port as its trace data source, the port compose publishes", () => {
    const queryPort = hostPort(jaeger.extensions.jaeger_query.http.endpoint as string).port;
    const source = datasources.find((entry) => entry.type === 'jaeger');
    expect(hostPort(source?.url as string)).toEqual({ host: 'jaeger', port: queryPort });
    expect(services.jaeger!.ports).toContain(`${queryPort}:${queryPort}`);
  });
});
