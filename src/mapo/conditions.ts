/**
 * Conditions in the Machine API's shape (openshift/api `machine/v1beta1` Condition: type, status,
 * severity, reason, message, lastTransitionTime): the one setter every mapo controller writes
 * them with, and the one Paused condition, so the machine, MachineSet and migration controllers
 * never write the same condition two ways (which would make them undo each other's writes).
 */
import { metaTime } from '../kube/index.ts';
import { MachineConditions, PausedReasons, type AuthorityState, type Condition } from './api/index.ts';

export type Severity = 'Error' | 'Warning' | 'Info';

export interface MachineConditionInput {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  /** machine-api-operator leaves it empty on True conditions. */
  reason?: string;
  message?: string;
  /** Kept only with status False, as openshift/api documents. */
  severity?: Severity;
}

/**
 * Sets the condition of `input.type` in place; lastTransitionTime moves only when the status
 * flips. Returns whether anything changed.
 */
export function setMachineCondition(
  conditions: Condition[],
  input: MachineConditionInput,
  nowMs: number = Date.now(),
): boolean {
  const i = conditions.findIndex((c) => c.type === input.type);
  const existing = conditions[i];
  const next: Condition = {
    type: input.type,
    status: input.status,
    ...(input.status === 'False' && input.severity ? { severity: input.severity } : {}),
    ...(input.reason ? { reason: input.reason } : {}),
    ...(input.message ? { message: input.message } : {}),
    lastTransitionTime:
      existing?.status === input.status && existing.lastTransitionTime
        ? existing.lastTransitionTime
        : metaTime(nowMs),
  };
  if (!existing) {
    conditions.push(next);
    return true;
  }
  const same =
    existing.status === next.status &&
    existing.reason === next.reason &&
    existing.message === next.message &&
    existing.severity === next.severity;
  if (same) return false;
  conditions[i] = next;
  return true;
}

/** Removes the condition of `type`; returns whether it was there. */
export function removeMachineCondition(conditions: Condition[], type: string): boolean {
  const i = conditions.findIndex((c) => c.type === type);
  if (i < 0) return false;
  conditions.splice(i, 1);
  return true;
}

export function getMachineCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * The Paused condition for a status.authoritativeAPI (machine-api-operator's): True with reason
 * AuthoritativeAPINotMachineAPI while ClusterAPI or Migrating, else False (Info) with
 * AuthoritativeAPIMachineAPI; the message names the value.
 */
export function pausedCondition(state: AuthorityState): MachineConditionInput {
  const message = `The AuthoritativeAPI is set to ${state}`;
  return state === 'MachineAPI'
    ? {
        type: MachineConditions.Paused,
        status: 'False',
        severity: 'Info',
        reason: PausedReasons.MachineAPI,
        message,
      }
    : { type: MachineConditions.Paused, status: 'True', reason: PausedReasons.NotMachineAPI, message };
}
