/**
 * ClusterOperator conditions as a controller wants them: each keeps its lastTransitionTime while
 * its status stays (src/kube/conditions.ts `setCondition`, whose rules these follow), and a
 * controller's set is compared with what is there so that steady state writes nothing.
 */
import { setCondition, type Condition } from '../../kube/conditions.ts';
import type { ConditionStatus, OpenShiftCondition } from '../api/index.ts';

export interface WantedCondition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message?: string;
}

export function findCondition(
  conditions: readonly OpenShiftCondition[] | undefined,
  type: string,
): OpenShiftCondition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** The wanted conditions, in order, with the transition times of those already there. */
export function conditionsFor(
  existing: readonly OpenShiftCondition[] | undefined,
  wanted: readonly WantedCondition[],
  now: number,
): OpenShiftCondition[] {
  const list: Condition[] = [];
  for (const w of wanted) {
    const cur = findCondition(existing, w.type);
    if (cur) list.push({ reason: '', message: '', ...cur, type: cur.type, status: cur.status });
    setCondition(list, w, now);
  }
  return list.map((c) => ({
    type: c.type,
    status: c.status,
    lastTransitionTime: c.lastTransitionTime,
    reason: c.reason,
    message: c.message,
  }));
}

/** Whether every condition of `computed` is already there, same status, reason and message. */
export function conditionsPresent(
  existing: readonly OpenShiftCondition[] | undefined,
  computed: readonly OpenShiftCondition[],
): boolean {
  return computed.every((c) => {
    const cur = findCondition(existing, c.type);
    return (
      cur !== undefined &&
      cur.status === c.status &&
      (cur.reason ?? '') === c.reason &&
      (cur.message ?? '') === (c.message ?? '')
    );
  });
}
