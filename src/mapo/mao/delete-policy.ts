/**
 * Which Machines a MachineSet deletes first when it scales down (machine-api-operator
 * `pkg/controller/machineset/delete_policy.go`). Each policy gives a Machine a priority from 0 to
 * 100; the highest go first. The priorities are upstream's, including their quirks:
 *
 * - Every policy puts a Machine already being deleted, one marked with
 *   `machine.openshift.io/delete-machine`, and one with `status.errorReason` or `errorMessage`
 *   first: at 100 for Oldest and Newest, at 50 for Random (above Random's others).
 * - Only Oldest also honours the older `machine.openshift.io/cluster-api-delete-machine`.
 * - Random: a Machine without a Node (no `status.nodeRef`) runs no workload, so 40; the rest 20.
 *   Within one priority the order is the Machines' names (upstream sorts the name-ordered list
 *   unstably; this sort is stable, so the same set always loses the same Machines).
 * - Oldest: the age mapped onto 0..100 as 100·(1 − e^(−age/10 days)); Newest: 100 minus that. A
 *   Machine without a creation time (or created in the future) is 0 for Oldest, hence 100 for
 *   Newest, as upstream computes it.
 *
 * Pure: the controller (machineset.ts) passes the Machines it counts and the time.
 */
import { timeMs } from '../../kube/index.ts';
import { Annotations, DELETE_POLICIES, type DeletePolicy, type Machine } from '../api/index.ts';

/** The annotation `delete-machine` replaced (kept for the cluster-autoscaler's older provider). */
export const OLD_DELETE_MACHINE_ANNOTATION = 'machine.openshift.io/cluster-api-delete-machine';

export const MUST_DELETE = 100;
export const BETTER_DELETE = 50;
export const PREFER_DELETE = 40;
export const COULD_DELETE = 20;
export const MUST_NOT_DELETE = 0;

const SECONDS_PER_TEN_DAYS = 864_000;

export type DeletePriorityFunc = (machine: Machine, nowMs: number) => number;

const deleting = (m: Machine) => !!m.metadata?.deletionTimestamp;
const marked = (m: Machine, key: string) => !!m.metadata?.annotations?.[key];
const failed = (m: Machine) => m.status?.errorReason !== undefined || m.status?.errorMessage !== undefined;

function oldest(m: Machine, nowMs: number): number {
  if (deleting(m)) return MUST_DELETE;
  if (marked(m, Annotations.DeleteMachine) || marked(m, OLD_DELETE_MACHINE_ANNOTATION)) return MUST_DELETE;
  if (failed(m)) return MUST_DELETE;
  const created = timeMs(m.metadata?.creationTimestamp);
  if (created === undefined) return MUST_NOT_DELETE;
  const ageSeconds = (nowMs - created) / 1000;
  if (ageSeconds < 0) return MUST_NOT_DELETE;
  return MUST_DELETE * (1 - Math.exp(-ageSeconds / SECONDS_PER_TEN_DAYS));
}

function newest(m: Machine, nowMs: number): number {
  if (deleting(m) || marked(m, Annotations.DeleteMachine) || failed(m)) return MUST_DELETE;
  return MUST_DELETE - oldest(m, nowMs);
}

function random(m: Machine): number {
  if (deleting(m)) return MUST_DELETE;
  if (marked(m, Annotations.DeleteMachine) || failed(m)) return BETTER_DELETE;
  if (!m.status?.nodeRef) return PREFER_DELETE;
  return COULD_DELETE;
}

const POLICIES: Record<DeletePolicy, DeletePriorityFunc> = { Random: random, Oldest: oldest, Newest: newest };

/** The priority function of `spec.deletePolicy` (unset: Random), or undefined for an unknown policy. */
export function deletePriorityFunc(policy: string | undefined): DeletePriorityFunc | undefined {
  if (policy === undefined || policy === '') return POLICIES.Random;
  return (DELETE_POLICIES as readonly string[]).includes(policy)
    ? POLICIES[policy as DeletePolicy]
    : undefined;
}

/** The message for a policy `deletePriorityFunc` does not know (upstream's wording). */
export function unknownDeletePolicy(policy: string): string {
  return `Unsupported delete policy ${policy}. Must be one of 'Random', 'Newest', or 'Oldest'`;
}

/**
 * The `count` Machines to delete: all of them when `count` covers them, else the highest
 * priorities, ties in name order.
 */
export function machinesToDelete(
  machines: readonly Machine[],
  count: number,
  priority: DeletePriorityFunc,
  nowMs: number,
): Machine[] {
  if (count <= 0) return [];
  const byName = [...machines].sort((a, b) => nameOf(a).localeCompare(nameOf(b)));
  if (count >= byName.length) return byName;
  const scored = byName.map((m) => ({ m, p: priority(m, nowMs) }));
  scored.sort((a, b) => b.p - a.p);
  return scored.slice(0, count).map((s) => s.m);
}

const nameOf = (m: Machine) => m.metadata?.name ?? '';
