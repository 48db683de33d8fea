/**
 * What every platform's operands share, as upstream's operator renders it (CCCMO
 * `pkg/cloud/common`, and the objects its `manifests/` ship through the cluster-version operator,
 * which we render ourselves so a plain Kubernetes cluster gets them too):
 *
 * - the operands' namespace, the `cloud-controller-manager` and `cloud-node-manager`
 *   ServiceAccounts and the RBAC common to all CCMs (`manifests/…_00_namespace.yaml`,
 *   `…_03_rbac_provider.yaml`);
 * - the control-plane Deployment every CCM is: two replicas (one on a single-replica topology),
 *   `Recreate`, host network, on masters, one per node (required anti-affinity), the standard
 *   tolerations and `system-cluster-critical`;
 * - the command upstream wraps every CCM in (`apiserver-url.env`, so the API is reached through
 *   its load balancer before the network plugin runs), the leader-election flags, the
 *   `ccm-trusted-ca` and host `/etc/kubernetes` mounts;
 * - `finish`: `SubstituteCommonPartsFromConfig` — the proxy variables on every container, one
 *   replica on a single-replica topology — and our inventory label; `podDisruptionBudget`
 *   (`GetCommonResources`).
 */
import type {
  KubernetesObject,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1Container,
  V1DaemonSet,
  V1Deployment,
  V1DeploymentSpec,
  V1EnvVar,
  V1Namespace,
  V1PodDisruptionBudget,
  V1PodSpec,
  V1Role,
  V1RoleBinding,
  V1ServiceAccount,
  V1Toleration,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import { CCM_PROVIDER_LABEL, OPERAND_LABEL, SHARED_OPERAND, type OperandOwner } from './labels.ts';
import type { OperandPlatform, RenderInput } from './types.ts';

export const DEFAULT_OPERAND_NAMESPACE = 'openshift-cloud-controller-manager';

/** The ServiceAccount every CCM Deployment runs as, in the operands' namespace. */
export const CCM_SERVICE_ACCOUNT = 'cloud-controller-manager';
/** The ServiceAccount of node managers (Azure's DaemonSet). */
export const CNM_SERVICE_ACCOUNT = 'cloud-node-manager';

/** The Lease every CCM elects its leader on (the framework's default name), in the operands' namespace. */
export const CCM_LEASE = 'cloud-controller-manager';

/** OpenShift's leader-election timings (openshift/enhancements CONVENTIONS "high availability"). */
export const LEADER_ELECTION = { leaseDuration: '137s', renewDeadline: '107s', retryPeriod: '26s' };

/** The CCM's secure port, registered for host-network CCMs in OpenShift's host-port registry. */
export const CCM_PORT = 10258;
/** The node manager's. */
export const CNM_PORT = 10263;

export const TRUSTED_CA_CONFIGMAP = 'ccm-trusted-ca';
/** Where RHEL-based images read their trust bundle; ccm-trusted-ca's `ca-bundle.crt` is mounted over it. */
export const SYSTEM_TRUST_DIR = '/etc/pki/ca-trust/extracted/pem';
export const SYSTEM_TRUST_FILE = 'tls-ca-bundle.pem';
/** The synced cloud config every platform's CCM reads (key `cloud.conf`), written by the operator. */
export const CLOUD_CONF_CONFIGMAP = 'cloud-conf';

const WORKLOAD_ANNOTATION = {
  'target.workload.openshift.io/management': '{"effect": "PreferredDuringScheduling"}',
};

/** Kinds without a namespace among those we render. */
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

export function isClusterScoped(obj: KubernetesObject): boolean {
  return CLUSTER_SCOPED.has(obj.kind ?? '');
}

/* ------------------------------------------------------------------ the shared objects */

/**
 * The namespace, ServiceAccounts and RBAC every platform's CCM needs, as upstream's manifests
 * declare them (the version of `…_03_rbac_provider.yaml` with `services get` and the
 * cloud-node-manager ServiceAccount), in `input.namespace`.
 */
export function sharedObjects(input: RenderInput): KubernetesObject[] {
  const ns = input.namespace;
  const meta = (name: string, namespace?: string) => ({
    name,
    ...(namespace ? { namespace } : {}),
    labels: { [OPERAND_LABEL]: SHARED_OPERAND },
  });
  const ccm: Subject = { kind: 'ServiceAccount', name: CCM_SERVICE_ACCOUNT, namespace: ns };
  const namespace: V1Namespace = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: ns,
      annotations: {
        // No cluster default node selector: the CCM goes to masters, the node manager everywhere.
        'openshift.io/node-selector': '',
        'workload.openshift.io/allowed': 'management',
      },
      // Host network and host paths: the namespace must admit privileged pods (PSA), and on
      // OpenShift it runs before SCCs exist (run level 0).
      labels: {
        [OPERAND_LABEL]: SHARED_OPERAND,
        'openshift.io/run-level': '0',
        'openshift.io/cluster-monitoring': 'true',
        'pod-security.kubernetes.io/enforce': 'privileged',
        'pod-security.kubernetes.io/audit': 'privileged',
        'pod-security.kubernetes.io/warn': 'privileged',
      },
    },
  };
  const serviceAccounts: V1ServiceAccount[] = [CCM_SERVICE_ACCOUNT, CNM_SERVICE_ACCOUNT].map((name) => ({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: meta(name, ns),
  }));
  const role: V1Role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: meta(CCM_SERVICE_ACCOUNT, ns),
    rules: [
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: [CCM_LEASE],
        verbs: ['get', 'list', 'create', 'update'],
      },
      { apiGroups: [''], resources: ['events'], verbs: ['create'] },
    ],
  };
  const roleBinding: V1RoleBinding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: meta(CCM_SERVICE_ACCOUNT, ns),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: CCM_SERVICE_ACCOUNT },
    subjects: [ccm],
  };
  const core = (resources: string[], verbs: string[]) => ({ apiGroups: [''], resources, verbs });
  const clusterRole: V1ClusterRole = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: meta(CCM_SERVICE_ACCOUNT),
    rules: [
      core(['events'], ['create', 'patch', 'update']),
      core(['nodes'], ['*']),
      core(['nodes/status'], ['patch']),
      core(['services'], ['get', 'list', 'patch', 'update', 'watch']),
      core(['services/status'], ['patch']),
      core(['serviceaccounts'], ['create', 'get', 'list', 'watch', 'update']),
      core(['serviceaccounts/token'], ['create']),
      core(['persistentvolumes'], ['get', 'list', 'update', 'watch']),
      core(['endpoints'], ['create', 'get', 'list', 'watch', 'update']),
      core(['secrets'], ['get', 'list', 'watch']),
      core(['configmaps'], ['get']),
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['get', 'list', 'watch', 'create', 'update'],
      },
    ],
  };
  const clusterRoleBinding = clusterBinding(meta(CCM_SERVICE_ACCOUNT), CCM_SERVICE_ACCOUNT, [ccm]);
  // Delegated authentication of a secure port reads the API server's client CA from kube-system.
  const authReader: V1RoleBinding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: meta(`${CCM_SERVICE_ACCOUNT}:apiserver-authentication-reader`, 'kube-system'),
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: 'extension-apiserver-authentication-reader',
    },
    subjects: [ccm],
  };
  const nodeManagerRole: V1ClusterRole = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: meta(CNM_SERVICE_ACCOUNT),
    rules: [core(['nodes'], ['watch', 'list', 'get', 'update', 'patch']), core(['nodes/status'], ['patch'])],
  };
  const nodeManagerBinding = clusterBinding(meta(CNM_SERVICE_ACCOUNT), CNM_SERVICE_ACCOUNT, [
    { kind: 'ServiceAccount', name: CNM_SERVICE_ACCOUNT, namespace: ns },
  ]);
  return [
    namespace,
    ...serviceAccounts,
    role,
    roleBinding,
    clusterRole,
    clusterRoleBinding,
    authReader,
    nodeManagerRole,
    nodeManagerBinding,
  ];
}

export interface Subject {
  kind: 'ServiceAccount';
  name: string;
  namespace: string;
}

export function clusterBinding(
  metadata: V1ClusterRoleBinding['metadata'],
  clusterRole: string,
  subjects: Subject[],
): V1ClusterRoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
    subjects,
  };
}

export function namespacedBinding(
  name: string,
  namespace: string,
  role: string,
  subjects: Subject[],
): V1RoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role },
    subjects,
  };
}

/* ------------------------------------------------------------------ the control-plane Deployment */

/**
 * The tolerations of upstream's CCM Deployments (every platform but OpenStack, whose asset has
 * its own set): masters, the taints of a Node the CCM has not initialized yet and of one whose
 * network is not up, and two minutes on an unreachable or not-ready Node before eviction.
 */
export const UPSTREAM_TOLERATIONS: readonly V1Toleration[] = [
  { effect: 'NoSchedule', key: 'node-role.kubernetes.io/master', operator: 'Exists' },
  { effect: 'NoExecute', key: 'node.kubernetes.io/unreachable', operator: 'Exists', tolerationSeconds: 120 },
  { effect: 'NoExecute', key: 'node.kubernetes.io/not-ready', operator: 'Exists', tolerationSeconds: 120 },
  { effect: 'NoSchedule', key: 'node.cloudprovider.kubernetes.io/uninitialized', operator: 'Exists' },
  { effect: 'NoSchedule', key: 'node.kubernetes.io/not-ready', operator: 'Exists' },
];

export const MASTER_NODE_SELECTOR = { 'node-role.kubernetes.io/master': '' };

export interface ControlPlaneDeployment {
  /** `<platform>-cloud-controller-manager`, also its `k8s-app` label. */
  name: string;
  platform: OperandPlatform;
  namespace: string;
  /** The pod spec's own parts; the shared ones (host network, placement, ServiceAccount) are added. */
  pod: Pick<V1PodSpec, 'containers' | 'volumes'> & Partial<V1PodSpec>;
}

/**
 * A CCM Deployment as every upstream asset writes it: `k8s-app` and the provider label as
 * selector, two replicas, `Recreate` (the host port must be free before the new pod starts),
 * host network, masters, one pod per node, the standard tolerations. `pod` may override
 * placement (OpenStack's tolerations, shiftstack's node affinity).
 */
export function controlPlaneDeployment(d: ControlPlaneDeployment): V1Deployment {
  const labels = { 'k8s-app': d.name, [CCM_PROVIDER_LABEL]: d.platform };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: d.name, namespace: d.namespace, labels: { ...labels } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { ...labels } },
      strategy: { type: 'Recreate' },
      template: {
        metadata: { annotations: { ...WORKLOAD_ANNOTATION }, labels: { ...labels } },
        spec: {
          hostNetwork: true,
          serviceAccountName: CCM_SERVICE_ACCOUNT,
          priorityClassName: 'system-cluster-critical',
          nodeSelector: { ...MASTER_NODE_SELECTOR },
          affinity: {
            podAntiAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: [
                { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { ...labels } } },
              ],
            },
          },
          tolerations: UPSTREAM_TOLERATIONS.map((t) => ({ ...t })),
          ...d.pod,
        },
      },
    },
  };
}

/** The workload annotation upstream's pod templates carry (workload partitioning on OpenShift). */
export function workloadAnnotation(): Record<string, string> {
  return { ...WORKLOAD_ANNOTATION };
}

/**
 * Upstream's container command: bash sources `/etc/kubernetes/apiserver-url.env` (the API load
 * balancer's address, written on every OpenShift node), so the CCM reaches the API server before
 * the network plugin makes the Service network work — which needs Nodes the CCM initializes.
 */
export function apiserverUrlCommand(binary: string, flags: readonly string[]): string[] {
  return [
    '/bin/bash',
    '-c',
    [
      '#!/bin/bash',
      'set -o allexport',
      'if [[ -f /etc/kubernetes/apiserver-url.env ]]; then',
      '  source /etc/kubernetes/apiserver-url.env',
      'fi',
      `exec ${binary} \\`,
      ...flags.map((f, i) => `  ${f}${i < flags.length - 1 ? ' \\' : ''}`),
      '',
    ].join('\n'),
  ];
}

/** `--leader-elect*` as every upstream asset passes them, the Lease in the operands' namespace. */
export function leaderElectionFlags(namespace: string): string[] {
  return [
    '--leader-elect=true',
    `--leader-elect-lease-duration=${LEADER_ELECTION.leaseDuration}`,
    `--leader-elect-renew-deadline=${LEADER_ELECTION.renewDeadline}`,
    `--leader-elect-retry-period=${LEADER_ELECTION.retryPeriod}`,
    `--leader-elect-resource-namespace=${namespace}`,
  ];
}

/** `--tls-cipher-suites`/`--tls-min-version` from the cluster's TLS profile, where upstream passes them. */
export function tlsFlags(input: RenderInput): string[] {
  const out: string[] = [];
  if (input.tls?.cipherSuites) out.push(`--tls-cipher-suites=${input.tls.cipherSuites}`);
  if (input.tls?.minVersion) out.push(`--tls-min-version=${input.tls.minVersion}`);
  return out;
}

/** Upstream's `--feature-gates` value: the enabled gates, `Name=true`, comma-separated. */
export function featureGatesValue(input: RenderInput): string {
  return input.featureGates.map((g) => `${g}=true`).join(',');
}

/** The `OCP_INFRASTRUCTURE_NAME` variable upstream's `--cluster-name=$(OCP_INFRASTRUCTURE_NAME)` reads. */
export function infrastructureNameEnv(input: RenderInput): V1EnvVar {
  return { name: 'OCP_INFRASTRUCTURE_NAME', value: input.infrastructureName };
}

export const HOST_ETC_KUBE: { volume: V1Volume; mount: V1VolumeMount } = {
  volume: { name: 'host-etc-kube', hostPath: { path: '/etc/kubernetes', type: 'Directory' } },
  mount: { name: 'host-etc-kube', mountPath: '/etc/kubernetes', readOnly: true },
};

export const TRUSTED_CA: { volume: V1Volume; mount: V1VolumeMount } = {
  volume: {
    name: 'trusted-ca',
    configMap: { name: TRUSTED_CA_CONFIGMAP, items: [{ key: 'ca-bundle.crt', path: SYSTEM_TRUST_FILE }] },
  },
  mount: { name: 'trusted-ca', mountPath: SYSTEM_TRUST_DIR, readOnly: true },
};

/** The synced cloud config (`cloud-conf`, key `cloud.conf`) as a volume named `name`, file `path`. */
export function cloudConfVolume(name: string, path = 'cloud.conf'): V1Volume {
  return { name, configMap: { name: CLOUD_CONF_CONFIGMAP, items: [{ key: 'cloud.conf', path }] } };
}

export const HTTPS_PORT = { containerPort: CCM_PORT, name: 'https', protocol: 'TCP' } as const;

/** The CCM container as the assets share it: its name (upstream substitutes images by it) and pull policy. */
export function ccmContainer(c: Omit<V1Container, 'name'>): V1Container {
  return { name: 'cloud-controller-manager', imagePullPolicy: 'IfNotPresent', ...c };
}

/* ------------------------------------------------------------------ common resources and finishing */

/**
 * Upstream's `GetCommonResources`: a budget of one available CCM pod, named after the platform
 * type in lower case (`ibmcloud-cloud-controller-manager` for IBMCloud), selecting by the provider
 * label. Not rendered on a single-replica topology, where it would block every drain.
 */
export function podDisruptionBudget(platform: OperandPlatform, namespace: string): V1PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: `${platform.toLowerCase()}-cloud-controller-manager`, namespace },
    spec: { minAvailable: 1, selector: { matchLabels: { [CCM_PROVIDER_LABEL]: platform } } },
  };
}

/**
 * Upstream's `SubstituteCommonPartsFromConfig` on a platform's objects, and our label: the
 * cluster-wide proxy as `HTTP_PROXY`/`HTTPS_PROXY`/`NO_PROXY` on every container (not init
 * containers, as upstream) of Deployments and DaemonSets, one replica on a single-replica
 * topology, and OPERAND_LABEL = `owner` on every object.
 */
export function finish(
  input: RenderInput,
  owner: OperandOwner,
  objects: KubernetesObject[],
): KubernetesObject[] {
  const proxy = proxyEnv(input);
  for (const obj of objects) {
    obj.metadata ??= {};
    obj.metadata.labels = { ...obj.metadata.labels, [OPERAND_LABEL]: owner };
    if (obj.kind !== 'Deployment' && obj.kind !== 'DaemonSet') continue;
    const spec = (obj as V1Deployment | V1DaemonSet).spec!;
    for (const c of spec.template.spec?.containers ?? []) {
      if (proxy.length > 0) c.env = [...(c.env ?? []), ...proxy.map((e) => ({ ...e }))];
    }
    if (obj.kind === 'Deployment' && input.singleReplica) (spec as V1DeploymentSpec).replicas = 1;
  }
  return objects;
}

function proxyEnv(input: RenderInput): V1EnvVar[] {
  const p = input.proxy;
  if (!p) return [];
  const out: V1EnvVar[] = [];
  if (p.httpProxy) out.push({ name: 'HTTP_PROXY', value: p.httpProxy });
  if (p.httpsProxy) out.push({ name: 'HTTPS_PROXY', value: p.httpsProxy });
  if (p.noProxy) out.push({ name: 'NO_PROXY', value: p.noProxy });
  return out;
}
