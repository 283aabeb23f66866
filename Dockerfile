# syntax=docker/dockerfile:1
# Node 24 LTS. Build stage: every dependency, no install scripts (none is needed to compile:
# mongodb-memory-server's would download mongod), TypeScript compiled to dist/.
# test/dockerfile.test.ts checks this file's facts: the paths copied exist after a build, and
# the copied files start with production dependencies only.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build

# Production dependencies only (no TypeScript, no test tools, no embedded databases).
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# Runtime: what production runs and nothing else (no bench/, no offline stand-in, no demo
# data, no tests), owned by root and read-only to the `node` user the process runs as.
FROM node:24-bookworm-slim
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="listing-api" \
      org.opencontainers.image.description="A strict, fast list endpoint for event-organisation data in MongoDB" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.source="https://github.com/listing-api/listing-api"
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    METRICS_PORT=9464
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY --from=build /app/dist/server.js /app/dist/app.js ./dist/
COPY --from=build /app/dist/process ./dist/process
COPY --from=build /app/dist/lib ./dist/lib
COPY --from=build /app/dist/plugins ./dist/plugins
COPY --from=build /app/dist/routes ./dist/routes
COPY --from=build /app/dist/schemas ./dist/schemas
COPY --from=build /app/dist/list-query ./dist/list-query
COPY --from=build /app/dist/list-endpoint ./dist/list-endpoint
COPY --from=build /app/dist/changes ./dist/changes
COPY --from=build /app/dist/counts ./dist/counts
COPY --from=build /app/dist/mongodb-regex ./dist/mongodb-regex
COPY --from=build /app/dist/database ./dist/database
COPY --from=build /app/dist/access-control ./dist/access-control
COPY --from=build /app/dist/telemetry ./dist/telemetry
USER node
EXPOSE 3000 9464
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The garbage collector's sizing (docs/performance.md, "Why it is fast" ("A steady tail")): npm start and
# npm run start:dist pass the same flags, and npm run bench starts the service with these.
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=200", "--no-allocation-site-pretenuring", "dist/server.js"]
