/**
 * Status conditions with metav1.Condition semantics:
 *
 * - `lastTransitionTime` changes only when `status` flips; a new reason or message alone keeps it;
 * - `observedGeneration` records which spec the condition speaks about;
 * - `type` and `reason` follow the API's rules (CamelCase reasons, qualified-name types), checked
 *   here so a bad constant fails in the test that sets it rather than as a 422 in production.
 *
 * The functions work on a mutable list (a status draft, see `StatusPatcher`).
 */
import { metaTime } from './time.ts';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** metav1.Condition as it is on the wire (times are RFC 3339 strings). */
export interface Condition {
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export interface ConditionInput {
  type: string;
  status: ConditionStatus;
  reason: string;
  message?: string;
  observedGeneration?: number | undefined;
}

const REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const TYPE =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const MAX_MESSAGE = 32_768;

function validate(c: ConditionInput): void {
  if (!TYPE.test(c.type) || c.type.length > 316)
    throw new TypeError(`invalid condition type ${JSON.stringify(c.type)}`);
  if (!REASON.test(c.reason) || c.reason.length > 1024) {
    throw new TypeError(
      `invalid condition reason ${JSON.stringify(c.reason)}: use CamelCase, e.g. LoadBalancerPending`,
    );
  }
  if (!['True', 'False', 'Unknown'].includes(c.status))
    throw new TypeError(`invalid condition status ${c.status}`);
}

export function getCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === 'True';
}

/**
 * Adds or updates the condition of `input.type`; returns whether anything changed (so a caller
 * knows if a status write is due). `now` is the transition time when the status flips.
 */
export function setCondition(
  conditions: Condition[],
  input: ConditionInput,
  now: number = Date.now(),
): boolean {
  validate(input);
  const message = (input.message ?? '').slice(0, MAX_MESSAGE);
  const existing = conditions.find((c) => c.type === input.type);
  if (!existing) {
    conditions.push({
      type: input.type,
      status: input.status,
      ...(input.observedGeneration !== undefined ? { observedGeneration: input.observedGeneration } : {}),
      lastTransitionTime: metaTime(now),
      reason: input.reason,
      message,
    });
    return true;
  }
  let changed = false;
  if (existing.status !== input.status) {
    existing.status = input.status;
    existing.lastTransitionTime = metaTime(now);
    changed = true;
  }
  if (existing.reason !== input.reason) {
    existing.reason = input.reason;
    changed = true;
  }
  if (existing.message !== message) {
    existing.message = message;
    changed = true;
  }
  if (input.observedGeneration !== undefined && existing.observedGeneration !== input.observedGeneration) {
    existing.observedGeneration = input.observedGeneration;
    changed = true;
  }
  return changed;
}

/** Removes the condition of `type`; returns whether it was there. */
export function removeCondition(conditions: Condition[], type: string): boolean {
  const i = conditions.findIndex((c) => c.type === type);
  if (i < 0) return false;
  conditions.splice(i, 1);
  return true;
}
