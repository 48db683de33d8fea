/**
 * What the operator applies and may remove: the kinds operands are made of (the RBAC in
 * deploy/ccm-operator grants exactly these), and the label that makes an object part of the
 * operator's inventory. Every object the operator applies carries the label, with the platform it
 * was rendered for; objects without it are never touched.
 */
import { kinds, type KubernetesObject, type ResourceType } from '../../kube/index.ts';
import { groupOf } from '../../kube/resource.ts';

/** The label of every object the operator applied; its value is the platform (`OpenStack`). */
export const PLATFORM_LABEL = 'ccm-operator.shiftstack.io/platform';
/** Selects the inventory: every object carrying the label, whatever the platform. */
export const INVENTORY_SELECTOR = PLATFORM_LABEL;

/** In the order the operator removes them: workloads first, so nothing runs on removed RBAC or config. */
export const OPERAND_KINDS: readonly ResourceType[] = [
  kinds.Deployment,
  kinds.DaemonSet,
  kinds.Service,
  kinds.ConfigMap,
  kinds.RoleBinding,
  kinds.Role,
  kinds.ClusterRoleBinding,
  kinds.ClusterRole,
  kinds.ServiceAccount,
];

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
