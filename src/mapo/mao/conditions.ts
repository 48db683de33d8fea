/**
 * The Machine API's conditions (openshift/api `machine/v1beta1` Condition: a severity beside the
 * status, set only when the status is False), written with the runtime's `setCondition` rules:
 * lastTransitionTime moves only when the status flips, reasons are CamelCase.
 */
import { setCondition, type Condition as KubeCondition } from '../../kube/index.ts';
import type { Condition } from '../api/index.ts';

export type Severity = 'Error' | 'Warning' | 'Info';

export interface MachineConditionInput {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message?: string;
  /** Kept only when the status is False (openshift/api's rule). */
  severity?: Severity;
}

/** Sets the condition in `conditions` (a draft's list); returns whether anything changed. */
export function setMachineCondition(
  conditions: Condition[],
  input: MachineConditionInput,
  nowMs: number,
): boolean {
  // The Machine API's Condition has every field of metav1.Condition that setCondition touches.
  let changed = setCondition(conditions as unknown as KubeCondition[], input, nowMs);
  const entry = conditions.find((c) => c.type === input.type);
  const severity = input.status === 'False' ? input.severity : undefined;
  if (entry && entry.severity !== severity) {
    if (severity) entry.severity = severity;
    else delete entry.severity;
    changed = true;
  }
  return changed;
}

export function machineCondition(
  obj: { status?: { conditions?: readonly Condition[] | undefined } | undefined },
  type: string,
): Condition | undefined {
  return obj.status?.conditions?.find((c) => c.type === type);
}
