/**
 * Conditions in the Machine API's shape (openshift/api `machine/v1beta1` Condition: type, status,
 * severity, reason, message, lastTransitionTime), and the Paused condition the machine controller
 * also writes from status.authoritativeAPI: one definition, so both write the same thing.
 */
import { metaTime } from '../../kube/index.ts';
import type { AuthorityState, Condition } from '../api/index.ts';
import { MigrationConditions, PausedReasons } from './names.ts';

export interface MachineConditionInput {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  /** Only with status False, as openshift/api documents. */
  severity?: 'Error' | 'Warning' | 'Info';
}

/**
 * Sets the condition of `input.type` in place; lastTransitionTime moves only when the status
 * flips. Returns whether anything changed.
 */
export function setMachineCondition(
  conditions: Condition[],
  input: MachineConditionInput,
  now: number,
): boolean {
  const i = conditions.findIndex((c) => c.type === input.type);
  const existing = conditions[i];
  const next: Condition = {
    type: input.type,
    status: input.status,
    ...(input.status === 'False' && input.severity ? { severity: input.severity } : {}),
    reason: input.reason,
    message: input.message,
    lastTransitionTime:
      existing?.status === input.status && existing.lastTransitionTime
        ? existing.lastTransitionTime
        : metaTime(now),
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
        type: MigrationConditions.Paused,
        status: 'False',
        severity: 'Info',
        reason: PausedReasons.MachineAPI,
        message,
      }
    : { type: MigrationConditions.Paused, status: 'True', reason: PausedReasons.NotMachineAPI, message };
}
