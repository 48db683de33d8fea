/**
 * What the operator applies and may remove: the kinds operands are made of (the RBAC in
 * deploy/ccm-operator grants exactly these), and the label that makes an object part of the
 * operator's inventory (the renderers' OPERAND_LABEL). Every object the operator applies carries
 * the label, valued with the platform it was rendered for or `shared`; objects without it are
 * never touched.
 */
import { kinds, resourceType, type KubernetesObject, type ResourceType } from '../../kube/index.ts';
import { groupOf } from '../../kube/resource.ts';
import { OPERAND_LABEL } from '../operands/labels.ts';

/** The label of every object the operator applied; its value is the platform (`OpenStack`) or `shared`. */
export const PLATFORM_LABEL = OPERAND_LABEL;
/** Selects the inventory: every object carrying the label, whatever the platform. */
export const INVENTORY_SELECTOR = PLATFORM_LABEL;

export const PodDisruptionBudget = resourceType({
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  plural: 'poddisruptionbudgets',
  namespaced: true,
});

export const ValidatingAdmissionPolicy = resourceType({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  plural: 'validatingadmissionpolicies',
  namespaced: false,
});

export const ValidatingAdmissionPolicyBinding = resourceType({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  plural: 'validatingadmissionpolicybindings',
  namespaced: false,
});

/** In the order the operator removes them: workloads first, so nothing runs on removed RBAC or config. */
export const OPERAND_KINDS: readonly ResourceType[] = [
  kinds.Deployment,
  kinds.DaemonSet,
  PodDisruptionBudget,
  ValidatingAdmissionPolicyBinding,
  ValidatingAdmissionPolicy,
  kinds.RoleBinding,
  kinds.Role,
  kinds.ClusterRoleBinding,
  kinds.ClusterRole,
  kinds.ServiceAccount,
  kinds.Namespace,
];

/**
 * Kinds applied but never removed: the operands' namespace also holds what the sync controllers
 * write (cloud-conf, ccm-trusted-ca) and the CCM's Lease, which a hand-back must not take away.
 */
export const NEVER_PRUNED: readonly ResourceType[] = [kinds.Namespace];

/** The operand kind of an object, if it is one the operator may apply. */
export function operandKind(obj: KubernetesObject): ResourceType | undefined {
  return OPERAND_KINDS.find((t) => t.apiVersion === obj.apiVersion && t.kind === obj.kind);
}

/** An object's identity across API versions: group, kind, namespace, name. */
export function objectId(obj: KubernetesObject): string {
  const m = obj.metadata ?? {};
  return [groupOf(obj.apiVersion ?? ''), obj.kind, m.namespace ?? '', m.name ?? ''].join('/');
}

/** `Deployment openshift-cloud-controller-manager/openstack-cloud-controller-manager`, for messages. */
export function describeObject(obj: KubernetesObject): string {
  const m = obj.metadata ?? {};
  return `${obj.kind} ${m.namespace ? `${m.namespace}/` : ''}${m.name ?? ''}`;
}
