/**
 * The labels the operands carry. OPERAND_LABEL is the operator's inventory: every object
 * renderOperands returns has it, valued with the platform it belongs to or SHARED_OPERAND, so the
 * operator finds what it applied with one label selector and, on a platform change, removes the
 * previous platform's objects while what every platform shares stays.
 */
import type { OperandPlatform } from './types.ts';

export const OPERAND_LABEL = 'ccm-operator.shiftstack.io/operand';

/** OPERAND_LABEL's value on what every platform's CCM uses (namespace, ServiceAccounts, common RBAC). */
export const SHARED_OPERAND = 'shared';

export type OperandOwner = OperandPlatform | typeof SHARED_OPERAND;

/**
 * Upstream's selector labels (CCCMO `pkg/cloud/common`): a CCM's Deployment and pods carry the
 * platform type under the first, a node manager's DaemonSet under the second; the
 * PodDisruptionBudget selects by the first.
 */
export const CCM_PROVIDER_LABEL = 'infrastructure.openshift.io/cloud-controller-manager';
export const CNM_PROVIDER_LABEL = 'infrastructure.openshift.io/cloud-node-manager';

/** The platform an object was rendered for, SHARED_OPERAND, or undefined when it is not an operand. */
export function operandOwner(obj: { metadata?: { labels?: Record<string, string> } }): string | undefined {
  return obj.metadata?.labels?.[OPERAND_LABEL];
}
