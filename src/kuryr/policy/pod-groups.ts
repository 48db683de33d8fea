/**
 * The security groups of a pod's port under network policies (upstream's
 * `NetworkPolicySecurityGroupsDriver.get_security_groups`): the group of every KuryrNetworkPolicy
 * of the pod's namespace whose podSelector takes the pod, or the default pod groups
 * (`[neutron_defaults] pod_security_groups`) when none does. A policy whose group is not made yet,
 * or holds no rules yet (the controller records `status.podSelector` once they are written), holds
 * the pod back (upstream: ResourceNotReady only for the group), so a port never carries a group
 * that still denies what the policy allows; a policy being deleted no longer counts, so its group
 * can be taken off the ports.
 */
import type { V1LabelSelector } from '@kubernetes/client-node';
import { matchesLabelSelector } from '../../kube/selector.ts';

/** The fields of a KuryrNetworkPolicy the choice reads. */
export interface PolicyGroupView {
  metadata?:
    { name?: string | undefined; namespace?: string | undefined; deletionTimestamp?: unknown } | undefined;
  spec?: { podSelector?: V1LabelSelector | undefined } | undefined;
  status?: { securityGroupId?: string | undefined; podSelector?: unknown } | undefined;
}

export type PodGroups =
  | { ready: true; groups: string[] }
  /** Policies that select the pod but have no group with its rules yet, by name. */
  | { ready: false; waitingFor: string[] };

export function podSecurityGroups(
  pod: { namespace: string; labels: Readonly<Record<string, string>> },
  policies: readonly PolicyGroupView[],
  defaultGroups: readonly string[],
): PodGroups {
  const groups: string[] = [];
  const waitingFor: string[] = [];
  const selecting = policies
    .filter((p) => p.metadata?.namespace === pod.namespace && !p.metadata.deletionTimestamp)
    .filter((p) => matchesLabelSelector(p.spec?.podSelector ?? {}, pod.labels))
    .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  for (const p of selecting) {
    const id = p.status?.securityGroupId;
    if (id && p.status?.podSelector !== undefined) {
      if (!groups.includes(id)) groups.push(id);
    } else waitingFor.push(p.metadata?.name ?? '');
  }
  if (waitingFor.length > 0) return { ready: false, waitingFor };
  return { ready: true, groups: groups.length > 0 ? groups : [...defaultGroups] };
}

/** The same groups in any order: a port's groups are a set. */
export function sameGroups(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((g) => b.includes(g));
}
