/**
 * Every platform's cloud controller manager as upstream's operator renders it (CCCMO
 * `pkg/cloud.GetResources` and the manifests it ships through the cluster-version operator), from
 * one RenderInput: what the operator applies and what `shiftstack ccm-operator render` prints. A
 * pure function: the same input gives the same objects, in apply order.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { renderAws } from './aws.ts';
import { renderAzure } from './azure.ts';
import { finish, podDisruptionBudget, sharedObjects } from './common.ts';
import { renderGcp } from './gcp.ts';
import { renderIBMCloud } from './ibmcloud.ts';
import { SHARED_OPERAND } from './labels.ts';
import { renderNutanix } from './nutanix.ts';
import { renderOpenStack } from './openstack.ts';
import { renderPowerVS } from './powervs.ts';
import type { OperandPlatform, RenderedOperands, RenderInput } from './types.ts';
import { renderVSphere } from './vsphere.ts';

export * from './types.ts';
export * from './labels.ts';
export { OperandRenderError } from './errors.ts';
export { DEFAULT_IMAGES, IMAGE_KEYS, type ImageKey } from './images.ts';
export {
  CCM_LEASE,
  CCM_SERVICE_ACCOUNT,
  CLOUD_CONF_CONFIGMAP,
  DEFAULT_OPERAND_NAMESPACE,
  TRUSTED_CA_CONFIGMAP,
} from './common.ts';
export { CREDENTIALS_SECRET as OPENSTACK_CREDENTIALS_SECRET, OPENSTACK_CCM_NAME } from './openstack.ts';

const PLATFORMS: Readonly<Record<OperandPlatform, (input: RenderInput) => KubernetesObject[]>> = {
  OpenStack: renderOpenStack,
  AWS: renderAws,
  Azure: renderAzure,
  GCP: renderGcp,
  VSphere: renderVSphere,
  IBMCloud: renderIBMCloud,
  PowerVS: renderPowerVS,
  Nutanix: renderNutanix,
};

/**
 * Apply order: the namespace, then who may act (ServiceAccounts, roles, bindings), then the
 * admission policies that guard what the CCM serves, then the workloads and their budget.
 */
const KIND_ORDER = [
  'Namespace',
  'ServiceAccount',
  'Role',
  'ClusterRole',
  'RoleBinding',
  'ClusterRoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'Deployment',
  'DaemonSet',
  'PodDisruptionBudget',
];

/** `input.platform`'s operands with what every platform shares; throws OperandRenderError on a missing image. */
export function renderOperands(input: RenderInput): RenderedOperands {
  const own = PLATFORMS[input.platform](input);
  if (!input.singleReplica) own.push(podDisruptionBudget(input.platform, input.namespace));
  const objects = [
    ...finish(input, SHARED_OPERAND, sharedObjects(input)),
    ...finish(input, input.platform, own),
  ];
  const rank = (o: KubernetesObject) => {
    const i = KIND_ORDER.indexOf(o.kind ?? '');
    return i < 0 ? KIND_ORDER.length : i;
  };
  // A stable sort: within a kind, the order the renderer wrote.
  return {
    objects: objects
      .map((o, i) => ({ o, i }))
      .sort((a, b) => rank(a.o) - rank(b.o) || a.i - b.i)
      .map((x) => x.o),
  };
}
