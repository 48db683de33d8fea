/**
 * A MachineSet's status from the Machines it counts (machine-api-operator
 * `pkg/controller/machineset/status.go` and `util.go`):
 *
 * - `replicas`: the Machines counted (matching the selector, controlled by this set, not deleting);
 * - `fullyLabeledReplicas`: those carrying every label of the template;
 * - `readyReplicas`: those whose Node (`status.nodeRef`) is Ready;
 * - `availableReplicas`: Ready for longer than `minReadySeconds` (by the Ready condition's
 *   lastTransitionTime), or Ready when it is 0;
 * - `observedGeneration`: the generation these counts answer;
 * - `labelSelector`: `spec.selector` as a string, which `/scale` shows (a ReplicaSet writes it the
 *   same way; upstream's MachineSet leaves it to the CRD).
 *
 * Every other status field is kept as it is. Pure: the controller passes the Nodes and the time.
 */
import type { V1Node } from '@kubernetes/client-node';
import { labelSelectorString, timeMs } from '../../kube/index.ts';
import type { Machine, MachineSet, MachineSetStatus } from '../api/index.ts';

export function readyCondition(node: V1Node | undefined) {
  return node?.status?.conditions?.find((c) => c.type === 'Ready');
}

export function isNodeReady(node: V1Node | undefined): boolean {
  return readyCondition(node)?.status === 'True';
}

/**
 * When a Ready Node becomes available, in ms since the epoch: at once (now) when `minReadySeconds`
 * is 0, else after its Ready condition's last transition plus `minReadySeconds`; undefined when
 * it is not Ready or the time is unknown.
 */
export function availableAt(
  node: V1Node | undefined,
  minReadySeconds: number,
  nowMs: number,
): number | undefined {
  if (!isNodeReady(node)) return undefined;
  if (minReadySeconds <= 0) return nowMs;
  const since = timeMs(readyCondition(node)?.lastTransitionTime);
  return since === undefined ? undefined : since + minReadySeconds * 1000;
}

export interface ComputedStatus {
  status: MachineSetStatus;
  /** The next time a Ready Machine becomes available, when one is still waiting out minReadySeconds. */
  nextAvailableAtMs: number | undefined;
}

export function machineSetStatus(
  ms: MachineSet,
  machines: readonly Machine[],
  nodeOf: (m: Machine) => V1Node | undefined,
  nowMs: number,
): ComputedStatus {
  const template = ms.spec?.template?.metadata?.labels ?? {};
  const minReady = ms.spec?.minReadySeconds ?? 0;
  let fullyLabeled = 0;
  let ready = 0;
  let available = 0;
  let next: number | undefined;
  for (const m of machines) {
    const labels = m.metadata?.labels ?? {};
    if (Object.entries(template).every(([k, v]) => labels[k] === v)) fullyLabeled++;
    const node = nodeOf(m);
    if (!isNodeReady(node)) continue;
    ready++;
    const at = availableAt(node, minReady, nowMs);
    // Upstream compares strictly ("after", not "at").
    if (at !== undefined && (minReady <= 0 || at < nowMs)) available++;
    else if (at !== undefined) next = next === undefined ? at : Math.min(next, at);
  }
  const status: MachineSetStatus = {
    ...(ms.status ?? {}),
    replicas: machines.length,
    fullyLabeledReplicas: fullyLabeled,
    readyReplicas: ready,
    availableReplicas: available,
    ...(ms.metadata?.generation !== undefined ? { observedGeneration: ms.metadata.generation } : {}),
  };
  const selector = ms.spec?.selector ? labelSelectorString(ms.spec.selector) : '';
  if (selector) status.labelSelector = selector;
  return { status, nextAvailableAtMs: next };
}
