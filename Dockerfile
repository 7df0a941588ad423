# syntax=docker/dockerfile:1
# corepool: build with the full toolchain, run with dist/, the engine's packages
# (packages/*: package.json and dist/) and production dependencies only, as an
# unprivileged user. test/dockerfile.e2e-spec.ts
# checks this file against the code and reproduces the runtime stage.

# The full version CI runs the whole suite on (.ci/run, NODE_PIN): the image that
# ships is the runtime that was tested. The Active LTS line (docs/operations.md).
ARG NODE_VERSION=26.12.1

# 1. Build: every dependency, then compile TypeScript to dist/ and bundle the threads' code.
FROM node:${NODE_VERSION}-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The workspaces' manifests, so that npm links the engine's packages (@corepool/*).
COPY packages/core/package.json ./packages/core/
COPY packages/nestjs/package.json ./packages/nestjs/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY packages ./packages
COPY src ./src
# The build compiles the packages, then the service, then bundles the threads' code (ADR 0019).
COPY scripts/build ./scripts/build
RUN npm run build \
 && for package in core nestjs; do \
      mkdir -p /ship/packages/$package \
      && cp -r packages/$package/package.json packages/$package/dist /ship/packages/$package/; \
    done

# 2. Production dependencies only, installed clean (no dev toolchain, no pino-pretty).
FROM node:${NODE_VERSION}-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/core/package.json ./packages/core/
COPY packages/nestjs/package.json ./packages/nestjs/
# The OTLP gRPC exporter (and grpc-js under it) is an optional dependency, loaded only with
# OTEL_EXPORTER_OTLP_PROTOCOL=grpc: left out unless the image is built with
# --build-arg OTLP_GRPC=true (docs/observability.md).
ARG OTLP_GRPC=false
# @nestjs/swagger names typescript an optional peer (for its build-time plugin), so npm
# keeps it despite --omit=dev; nothing loads it at run time.
RUN npm ci --omit=dev --no-audit --no-fund \
 && if [ "$OTLP_GRPC" != true ]; then npm uninstall --no-save --omit=dev --no-audit --no-fund @opentelemetry/exporter-trace-otlp-grpc; fi \
 && rm -rf node_modules/typescript && npm cache clean --force

# 3. Runtime: dist/, packages/ and node_modules/ (whose @corepool/* link to packages/), owned by root and run as `node`, so the
#    process cannot change its own code.
FROM node:${NODE_VERSION}-slim AS runtime
# HOST: a container is reached from outside it; configure AUTH_MODE (docs/security.md).
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
# glibc's malloc settings that give a burst of big bodies' memory back (ADR 0044). The
# cluster primary adds them to the processes it forks; a single process
# (CLUSTER_PROCESSES=1, as in Kubernetes) has no primary, so the image sets them.
ENV MALLOC_ARENA_MAX=2 \
    MALLOC_TRIM_THRESHOLD_=131072 \
    MALLOC_MMAP_THRESHOLD_=65536
WORKDIR /app
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /ship/packages ./packages
# The SQLite job store (JOBS_SQLITE_PATH=data/jobs.sqlite): the one directory the
# process writes. Mount a volume here to keep jobs across container restarts.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
# 3000: the API and the probes; 9464: /metrics and the detailed /health when
# ADMIN_PORT=9464 (as the Kubernetes manifest and compose set it).
EXPOSE 3000 9464
# Liveness only: a busy pool must not make Docker restart the container.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
# Exec form: node is PID 1's only process and receives SIGTERM itself.
CMD ["node", "dist/main.js"]
