/**
 * The Machine API's conditions (openshift/api machine/v1beta1 Condition: severity beside status,
 * lastTransitionTime moved only when the status flips), the types the machine controller writes,
 * and their reasons (machine-api-operator's, MAPO's).
 */
import { metaTime } from '../../kube/index.ts';
import type { Condition } from '../api/index.ts';

export const MachineConditions = {
  InstanceExists: 'InstanceExists',
  Drainable: 'Drainable',
  Drained: 'Drained',
  Paused: 'Paused',
} as const;

export const MachineReasons = {
  InstanceMissing: 'InstanceMissing',
  InstanceNotCreated: 'InstanceNotCreated',
  AuthoritativeAPINotMachineAPI: 'AuthoritativeAPINotMachineAPI',
  AuthoritativeAPIMachineAPI: 'AuthoritativeAPIMachineAPI',
} as const;

export type Severity = 'Error' | 'Warning' | 'Info';

export function getMachineCondition(
  list: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return list?.find((c) => c.type === type);
}

/** Sets the condition of `type`: True without severity, False with one; the time moves on a flip. */
export function setMachineCondition(
  list: Condition[],
  c: {
    type: string;
    status: 'True' | 'False' | 'Unknown';
    reason?: string;
    severity?: Severity;
    message?: string;
  },
  now = Date.now(),
): void {
  const i = list.findIndex((x) => x.type === c.type);
  const existing = list[i];
  const next: Condition = {
    type: c.type,
    status: c.status,
    lastTransitionTime:
      existing && existing.status === c.status ? existing.lastTransitionTime : metaTime(now),
    ...(c.status === 'False' && c.severity ? { severity: c.severity } : {}),
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
  };
  if (existing) list[i] = next;
  else list.push(next);
}
