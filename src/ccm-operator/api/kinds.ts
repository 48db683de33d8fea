/**
 * The OpenShift kinds the operator reads and writes, declared once: the object type (inferred
 * from the schema), the REST mapping (`operatorKinds.X`) and the CRD (deploy/ccm-operator/crds,
 * `npm run gen:crds`). On OpenShift these CRDs exist already and ours are not applied; they serve
 * plain Kubernetes and the demo. They declare what the operator uses and keep every other field,
 * so real OpenShift objects are accepted unchanged.
 */
import { defineKind, kubeObject, type Kind } from '../../kube/crd/kind.ts';
import type { Infer } from '../../kube/crd/schema.ts';
import { clusterOperatorSpec, clusterOperatorStatus } from './clusteroperator.ts';
import { CONFIG_GROUP, OPERATOR_GROUP } from './common.ts';
import { featureGateSpec, featureGateStatus } from './featuregate.ts';
import { infrastructureSpec, infrastructureStatus } from './infrastructure.ts';
import { kubeControllerManagerSpec, kubeControllerManagerStatus } from './kubecontrollermanager.ts';
import { proxySpec, proxyStatus } from './proxy.ts';

const config = { group: CONFIG_GROUP, version: 'v1', scope: 'Cluster', statusSubresource: true } as const;

export const infrastructure = defineKind({
  ...config,
  kind: 'Infrastructure',
  plural: 'infrastructures',
  schema: kubeObject({
    description: 'Where the cluster runs: its platform, name in the cloud, topology and cloud config.',
    spec: infrastructureSpec,
    status: infrastructureStatus,
  }),
});
export type Infrastructure = Infer<typeof infrastructure.schema>;

export const proxy = defineKind({
  ...config,
  kind: 'Proxy',
  plural: 'proxies',
  schema: kubeObject({
    description: 'The cluster-wide proxy and the CA certificates trusted besides the system ones.',
    spec: proxySpec,
    status: proxyStatus,
  }),
});
export type Proxy = Infer<typeof proxy.schema>;

export const featureGate = defineKind({
  ...config,
  kind: 'FeatureGate',
  plural: 'featuregates',
  schema: kubeObject({
    description: 'The feature gates of the cluster, per release version.',
    spec: featureGateSpec,
    status: featureGateStatus,
  }),
});
export type FeatureGate = Infer<typeof featureGate.schema>;

const condition = (type: string) => `.status.conditions[?(@.type=="${type}")]`;

export const clusterOperator = defineKind({
  ...config,
  kind: 'ClusterOperator',
  plural: 'clusteroperators',
  shortNames: ['co'],
  printerColumns: [
    {
      name: 'Version',
      type: 'string',
      jsonPath: '.status.versions[?(@.name=="operator")].version',
      description: 'The version the operator is at.',
    },
    {
      name: 'Available',
      type: 'string',
      jsonPath: `${condition('Available')}.status`,
      description: 'Whether the operator is running and stable.',
    },
    {
      name: 'Progressing',
      type: 'string',
      jsonPath: `${condition('Progressing')}.status`,
      description: 'Whether the operator is processing changes.',
    },
    {
      name: 'Degraded',
      type: 'string',
      jsonPath: `${condition('Degraded')}.status`,
      description: 'Whether the operator is degraded.',
    },
    {
      name: 'Since',
      type: 'date',
      jsonPath: `${condition('Available')}.lastTransitionTime`,
      description: "The time the operator's Available status last changed.",
    },
  ],
  schema: kubeObject({
    description: 'The state of an operator, as it reports it to the rest of the cluster.',
    spec: clusterOperatorSpec,
    status: clusterOperatorStatus,
  }),
});
export type ClusterOperator = Infer<typeof clusterOperator.schema>;

export const kubeControllerManager = defineKind({
  group: OPERATOR_GROUP,
  version: 'v1',
  scope: 'Cluster',
  statusSubresource: true,
  kind: 'KubeControllerManager',
  plural: 'kubecontrollermanagers',
  categories: ['coreoperators'],
  schema: kubeObject({
    description:
      'The kube-controller-manager operator; its CloudControllerOwner condition says whether the in-tree cloud loops still run.',
    spec: kubeControllerManagerSpec,
    status: kubeControllerManagerStatus,
  }),
});
export type KubeControllerManager = Infer<typeof kubeControllerManager.schema>;

/** The REST mappings, for KubeClient, informers and controllers. */
export const operatorKinds = {
  Infrastructure: infrastructure.resource,
  Proxy: proxy.resource,
  FeatureGate: featureGate.resource,
  ClusterOperator: clusterOperator.resource,
  KubeControllerManager: kubeControllerManager.resource,
} as const;

/** Every kind, in the order the CRD files are written. */
export const ALL_KINDS: readonly Kind<object>[] = [
  infrastructure,
  proxy,
  featureGate,
  clusterOperator,
  kubeControllerManager,
];
