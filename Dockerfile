# Deployment image for every shiftstack component (`shiftstack ccm`, `shiftstack capo`, ...).
# Node 24 LTS, as pinned in package.json; the TypeScript sources run through Node's type stripping.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
USER node
ENTRYPOINT ["node", "/app/bin/shiftstack.js"]
CMD ["--help"]
