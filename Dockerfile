# Deployment image for every shiftstack component (`shiftstack ccm`, `shiftstack capo`, ...).
# Node 24 LTS, as pinned in package.json; the TypeScript sources run through Node's type stripping.
#
# Upstream manifests work with only the image swapped: OCCM's run /bin/openstack-cloud-controller-manager
# (by path, in `args`), CAPO's run /manager (`command`), the machine-api-operator runs MAPO's
# /machine-controller-manager (`command`), Kuryr's image has kuryr-k8s-controller on its PATH; each
# is a small wrapper of `shiftstack ccm`, `shiftstack capo`, `shiftstack mapo` and `shiftstack kuryr
# controller` (image/bin). Only what runs is shipped: .dockerignore leaves out tests,
# test helpers, benchmarks, scripts and docs (test/image.test.ts checks both).
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts

FROM node:24-bookworm-slim
ENV NODE_ENV=production SHIFTSTACK_HOME=/app
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
# `shiftstack up` builds its demo cluster from this example.
COPY examples ./examples
COPY --chmod=0755 image/bin/entrypoint image/bin/shiftstack /usr/local/bin/
COPY --chmod=0755 image/bin/openstack-cloud-controller-manager /bin/openstack-cloud-controller-manager
COPY --chmod=0755 image/bin/manager /manager
COPY --chmod=0755 image/bin/machine-controller-manager /machine-controller-manager
COPY --chmod=0755 image/bin/kuryr-controller /usr/local/bin/kuryr-k8s-controller
# The kuryr CNI plugin where a CNI bin directory has it ("type": "kuryr-cni", deploy/kuryr/10-kuryr.conflist).
COPY --chmod=0755 image/bin/kuryr-cni /opt/cni/bin/kuryr-cni
# Numeric, so a pod's runAsNonRoot can be checked without a runAsUser.
USER 1000:1000
ENTRYPOINT ["/usr/local/bin/entrypoint"]
CMD ["--help"]
