/**
 * OpenStack's CCM: `shiftstack ccm` by default, upstream OCCM as CCCMO renders it with
 * `openstackCcm: 'upstream'`. Both are the Deployment `openstack-cloud-controller-manager`, so a
 * switch replaces one with the other in place.
 *
 * Upstream (CCCMO `pkg/cloud/openstack/assets/deployment.yaml`, the version with
 * `--feature-gates={{ .featureGates }}`, plus what its later commits added: `--cluster-name` from the
 * infrastructure name (7b957876, through `OCP_INFRASTRUCTURE_NAME`), the TLS profile and
 * `--secure-port=0` (ca9e78fb); and the OpenStack-only RBAC of
 * `manifests/…_04_rbac_provider_openstack.yaml`): the config and credentials at
 * `/etc/openstack/config/cloud.conf` and `/etc/openstack/secret/clouds.yaml`, `ccm-trusted-ca` over
 * the system trust bundle, `/etc/kubernetes` from the host.
 *
 * shiftstack: the same mounts, placement and Lease, with OCCM's flags translated to what
 * `shiftstack ccm` implements (src/cli/commands/ccm.ts):
 * - `--cloud-provider`, `--v`, `--feature-gates`, `--use-service-account-credentials`: not passed.
 *   The first two are OCCM's only spelling; shiftstack has no Kubernetes feature gates; and every
 *   controller runs on the pod's own ServiceAccount, which the common ClusterRole already grants
 *   what the controllers call (docs/ccm.md "Permissions").
 * - the secure port stays on (127.0.0.1:10258) for liveness and readiness probes on `/healthz`
 *   and `/readyz`, which need no token; a scrape of `/metrics` is authorized through the API
 *   server, hence the `system:auth-delegator` binding. The TLS profile is not passed: the port
 *   serves Node's TLS 1.2/1.3 defaults.
 * - the image's Node.js reads its trust store from its own bundle, not the system path, so
 *   `NODE_EXTRA_CA_CERTS` points it at the mounted `ccm-trusted-ca`.
 * - placement works on OpenShift and on any Kubernetes: control-plane nodes by either role label
 *   (an OR of node affinity terms), both taints tolerated.
 * - hardened as deploy/ccm: non-root, no privilege escalation, read-only root, no capabilities.
 */
import type {
  KubernetesObject,
  V1ClusterRole,
  V1Container,
  V1Deployment,
  V1ServiceAccount,
  V1Toleration,
} from '@kubernetes/client-node';
import {
  apiserverUrlCommand,
  CCM_PORT,
  CCM_SERVICE_ACCOUNT,
  ccmContainer,
  clusterBinding,
  cloudConfVolume,
  controlPlaneDeployment,
  featureGatesValue,
  HOST_ETC_KUBE,
  HTTPS_PORT,
  infrastructureNameEnv,
  leaderElectionFlags,
  SYSTEM_TRUST_DIR,
  SYSTEM_TRUST_FILE,
  tlsFlags,
  TRUSTED_CA,
} from './common.ts';
import { imageFor } from './images.ts';
import type { RenderInput } from './types.ts';

export const OPENSTACK_CCM_NAME = 'openstack-cloud-controller-manager';

/** Upstream's paths, which the synced `cloud-conf` refers to (`clouds-file`). */
export const CLOUD_CONFIG_PATH = '/etc/openstack/config/cloud.conf';
export const CLOUDS_YAML_DIR = '/etc/openstack/secret';
/** The Secret the CredentialsRequest `openshift-openstack-cloud-controller-manager` makes (key `clouds.yaml`). */
export const CREDENTIALS_SECRET = 'openstack-cloud-credentials';

/** The shiftstack image's entrypoint (image/bin/entrypoint): a shiftstack command line follows. */
const SHIFTSTACK_ENTRYPOINT = '/usr/local/bin/entrypoint';

export function renderOpenStack(input: RenderInput): KubernetesObject[] {
  return input.openstackCcm === 'upstream' ? upstream(input) : shiftstack(input);
}

const mounts = [
  HOST_ETC_KUBE.mount,
  { name: 'secret-occm', mountPath: CLOUDS_YAML_DIR, readOnly: true },
  { name: 'cloud-config', mountPath: '/etc/openstack/config', readOnly: true },
  TRUSTED_CA.mount,
];

const volumes = [
  HOST_ETC_KUBE.volume,
  {
    name: 'secret-occm',
    secret: { secretName: CREDENTIALS_SECRET, items: [{ key: 'clouds.yaml', path: 'clouds.yaml' }] },
  },
  TRUSTED_CA.volume,
  cloudConfVolume('cloud-config'),
];

/** Upstream's OpenStack asset tolerates these (its own set, not the other platforms'). */
const OPENSTACK_TOLERATIONS: V1Toleration[] = [
  { key: 'CriticalAddonsOnly', operator: 'Exists' },
  { key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.cloudprovider.kubernetes.io/uninitialized', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' },
];

function upstream(input: RenderInput): KubernetesObject[] {
  const flags = [
    '--v=1',
    '--cloud-config=$(CLOUD_CONFIG)',
    '--cloud-provider=openstack',
    '--cluster-name=$(OCP_INFRASTRUCTURE_NAME)',
    '--use-service-account-credentials=true',
    '--configure-cloud-routes=false',
    '--bind-address=127.0.0.1',
    ...leaderElectionFlags(input.namespace),
    `--feature-gates=${featureGatesValue(input)}`,
    ...tlsFlags(input),
    '--secure-port=0',
  ];
  const container = ccmContainer({
    image: imageFor(input, 'OpenStack', 'cloudControllerManagerOpenStack'),
    env: [{ name: 'CLOUD_CONFIG', value: CLOUD_CONFIG_PATH }, infrastructureNameEnv(input)],
    command: apiserverUrlCommand('/usr/bin/openstack-cloud-controller-manager', flags),
    ports: [{ ...HTTPS_PORT }],
    resources: { requests: { cpu: '200m', memory: '50Mi' } },
    terminationMessagePolicy: 'FallbackToLogsOnError',
    volumeMounts: mounts.map((m) => ({ ...m })),
  });
  const deployment = controlPlaneDeployment({
    name: OPENSTACK_CCM_NAME,
    platform: 'OpenStack',
    namespace: input.namespace,
    pod: { tolerations: OPENSTACK_TOLERATIONS, containers: [container], volumes: structuredClone(volumes) },
  });
  return [...upstreamRbac(), deployment];
}

/**
 * OCCM's `Initialize` takes a client as `kube-system/cloud-controller-manager` (`ClientOrDie`), to
 * annotate Services and record Events: upstream grants that ServiceAccount just this.
 */
function upstreamRbac(): KubernetesObject[] {
  const sa: V1ServiceAccount = {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: CCM_SERVICE_ACCOUNT, namespace: 'kube-system' },
  };
  const role: V1ClusterRole = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: OPENSTACK_CCM_NAME },
    rules: [
      { apiGroups: [''], resources: ['services'], verbs: ['patch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create'] },
    ],
  };
  const binding = clusterBinding({ name: OPENSTACK_CCM_NAME }, OPENSTACK_CCM_NAME, [
    { kind: 'ServiceAccount', name: CCM_SERVICE_ACCOUNT, namespace: 'kube-system' },
  ]);
  return [sa, role, binding];
}

/** The flags of `shiftstack ccm` in the shiftstack flavour (after the `ccm` subcommand). */
export function shiftstackCcmFlags(input: RenderInput): string[] {
  return [
    `--cloud-config=${CLOUD_CONFIG_PATH}`,
    '--cluster-name=$(OCP_INFRASTRUCTURE_NAME)',
    '--configure-cloud-routes=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${CCM_PORT}`,
    ...leaderElectionFlags(input.namespace),
  ];
}

function shiftstack(input: RenderInput): KubernetesObject[] {
  const probe = (path: string) => ({
    httpGet: { host: '127.0.0.1', port: CCM_PORT, scheme: 'HTTPS', path },
  });
  const container: V1Container = ccmContainer({
    image: imageFor(input, 'OpenStack', 'shiftstack'),
    // sh, as the image has no bash: read apiserver-url.env as upstream does, then run the
    // entrypoint with `args` (its "$@"), which stay a plain list of shiftstack flags.
    command: [
      '/bin/sh',
      '-c',
      'set -a; if [ -f /etc/kubernetes/apiserver-url.env ]; then . /etc/kubernetes/apiserver-url.env; fi; exec ' +
        `${SHIFTSTACK_ENTRYPOINT} "$@"`,
      'shiftstack',
    ],
    args: ['ccm', ...shiftstackCcmFlags(input)],
    env: [
      infrastructureNameEnv(input),
      { name: 'NODE_EXTRA_CA_CERTS', value: `${SYSTEM_TRUST_DIR}/${SYSTEM_TRUST_FILE}` },
    ],
    ports: [{ ...HTTPS_PORT }],
    livenessProbe: { ...probe('/healthz'), initialDelaySeconds: 10, failureThreshold: 8 },
    readinessProbe: probe('/readyz'),
    // Upstream's CPU; a Node.js process starts near 100 MiB, OCCM's 50Mi would not do.
    resources: { requests: { cpu: '200m', memory: '128Mi' } },
    terminationMessagePolicy: 'FallbackToLogsOnError',
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    },
    volumeMounts: mounts.map((m) => ({ ...m })),
  });
  const roles = ['node-role.kubernetes.io/control-plane', 'node-role.kubernetes.io/master'];
  const deployment: V1Deployment = controlPlaneDeployment({
    name: OPENSTACK_CCM_NAME,
    platform: 'OpenStack',
    namespace: input.namespace,
    pod: {
      containers: [container],
      volumes: structuredClone(volumes),
      tolerations: [
        ...OPENSTACK_TOLERATIONS,
        { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
      ],
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
    },
  });
  const pod = deployment.spec!.template.spec!;
  delete pod.nodeSelector;
  pod.affinity = {
    ...pod.affinity,
    // Terms are ORed: kubeadm labels control-plane nodes with the first, OpenShift with both.
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: roles.map((key) => ({ matchExpressions: [{ key, operator: 'Exists' }] })),
      },
    },
  };
  const authDelegator = clusterBinding(
    { name: `${CCM_SERVICE_ACCOUNT}:shiftstack-auth-delegator` },
    'system:auth-delegator',
    [{ kind: 'ServiceAccount', name: CCM_SERVICE_ACCOUNT, namespace: input.namespace }],
  );
  return [authDelegator, deployment];
}
