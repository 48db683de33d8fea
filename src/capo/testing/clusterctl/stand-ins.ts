/**
 * Stand-in CRDs for the kinds of the other Cluster API providers that clusterctl's templates
 * create beside CAPO's: the kubeadm control-plane and bootstrap providers' (KubeadmControlPlane,
 * KubeadmControlPlaneTemplate, KubeadmConfigTemplate) and core's MachineDeployment and
 * ClusterClass, and cert-manager's Issuer and Certificate (`clusterctl init` installs cert-manager
 * before any provider; the components' webhook certificate is one). On a management cluster those
 * install their own CRDs; here each is an open schema (spec and status kept whole) served in the
 * versions the files use, so objects go in and come back as they were sent, and what is checked is
 * ours. Cluster and Machine are not here: deploy/capo/crds has their stand-ins.
 */
import type { CrdVersion, CustomResourceDefinition } from '../../../kube/crd/kind.ts';

interface StandIn {
  group: string;
  kind: string;
  plural: string;
  /** Served versions, the stored one first; Cluster API's v1beta1 and v1beta2 by default. */
  versions?: readonly string[];
}

export const STAND_INS: readonly StandIn[] = [
  { group: 'controlplane.cluster.x-k8s.io', kind: 'KubeadmControlPlane', plural: 'kubeadmcontrolplanes' },
  {
    group: 'controlplane.cluster.x-k8s.io',
    kind: 'KubeadmControlPlaneTemplate',
    plural: 'kubeadmcontrolplanetemplates',
  },
  { group: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfigTemplate', plural: 'kubeadmconfigtemplates' },
  { group: 'cluster.x-k8s.io', kind: 'MachineDeployment', plural: 'machinedeployments' },
  { group: 'cluster.x-k8s.io', kind: 'ClusterClass', plural: 'clusterclasses' },
  { group: 'cert-manager.io', kind: 'Issuer', plural: 'issuers', versions: ['v1'] },
  { group: 'cert-manager.io', kind: 'Certificate', plural: 'certificates', versions: ['v1'] },
];

const open = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } as const;

/** The stand-in CRD of one kind: its versions served, the first stored, none pruning anything. */
export function standInCrd(s: StandIn): CustomResourceDefinition {
  const version = (name: string, storage: boolean): CrdVersion => ({
    name,
    served: true,
    storage,
    schema: {
      openAPIV3Schema: {
        type: 'object',
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { type: 'object' },
          spec: open,
          status: open,
        },
      },
    },
    subresources: { status: {} },
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${s.plural}.${s.group}` },
    spec: {
      group: s.group,
      scope: 'Namespaced',
      names: { kind: s.kind, listKind: `${s.kind}List`, plural: s.plural, singular: s.kind.toLowerCase() },
      versions: (s.versions ?? ['v1beta1', 'v1beta2']).map((v, i) => version(v, i === 0)),
    },
  };
}
