/**
 * The Neutron side of a KuryrNetworkPolicy: its one security group, the group's rules, and the
 * group's release. Rules go through the shared plan (src/openstack/services/securitygroup): the
 * rules Neutron holds are read each time and compared as Neutron compares them, so the group's
 * state never depends on a status a crash could have left behind, and the two egress rules Neutron
 * puts in every new group (upstream deletes them by hand) go as any unwanted rule does.
 *
 * The group is named as upstream names it (`sg/<namespace>-<name>`, 255 characters at most), and
 * told apart from another policy's of the same name (`a-b`/`c` and `a`/`b-c`) by its description,
 * which holds `<namespace>/<name>`; so a group created before a crash, whose id never reached the
 * KuryrNetworkPolicy's status, is found and adopted rather than made twice.
 */
import { ignoreNotFound, isConflict, isNotFound, isPreconditionFailed } from '../../openstack/core/errors.ts';
import type { NetworkV2 } from '../../openstack/network/v2/index.ts';
import type { SecurityGroupRule } from '../../openstack/network/v2/security-group-rules.ts';
import type { SecurityGroup } from '../../openstack/network/v2/security-groups.ts';
import { applyRulePlan, planRules } from '../../openstack/services/securitygroup/index.ts';
import type { PolicySgRule } from './rules.ts';

export interface PolicyGroupApi {
  readonly network: NetworkV2;
}

export interface PolicyRef {
  namespace: string;
  name: string;
}

/** Neutron's limit on a name. */
const NAME_MAX = 255;

/** Upstream's `get_resource_name(ns + '-' + name, prefix='sg/')`: the policy's part cut to fit. */
export function policyGroupName(ref: PolicyRef): string {
  const prefix = 'sg/';
  const name = `${ref.namespace}-${ref.name}`;
  return prefix + name.slice(0, NAME_MAX - prefix.length);
}

export function policyGroupDescription(ref: PolicyRef): string {
  return `Kuryr-Kubernetes Network Policy ${ref.namespace}/${ref.name} SG`;
}

/** Rules are compared by the traffic they allow; upstream's descriptions are not ours to keep. */
const POLICY_RULES = { description: false } as const;

/** The policy's group by name and description, whoever tagged it; the tags are put right on adoption. */
export async function findPolicyGroup(
  api: PolicyGroupApi,
  ref: PolicyRef,
  signal: AbortSignal,
): Promise<SecurityGroup | undefined> {
  const named = await api.network.securityGroups.list({ name: policyGroupName(ref) }, { signal }).all();
  return named.find((g) => g.description === policyGroupDescription(ref));
}

export interface EnsureGroupOptions {
  tags: readonly string[];
  projectId?: string | undefined;
  signal: AbortSignal;
}

/** The group `id` names when it still exists; else found by name, else created; tagged as ours. */
export async function ensurePolicyGroup(
  api: PolicyGroupApi,
  ref: PolicyRef,
  id: string | undefined,
  opts: EnsureGroupOptions,
): Promise<{ group: SecurityGroup; created: boolean }> {
  const { signal } = opts;
  let group: SecurityGroup | undefined;
  if (id) group = await api.network.securityGroups.get(id, { signal }).catch(ignoreNotFound);
  group ??= await findPolicyGroup(api, ref, signal);
  let created = false;
  if (!group) {
    group = await api.network.securityGroups.create(
      {
        name: policyGroupName(ref),
        description: policyGroupDescription(ref),
        ...(opts.projectId ? { project_id: opts.projectId } : {}),
      },
      { signal },
    );
    created = true;
  }
  const held = group.tags;
  const missing = opts.tags.filter((t) => !held.includes(t));
  if (missing.length > 0) {
    const tags = [...held, ...missing];
    await api.network.tags.replace('security-groups', group.id, tags, { signal });
    group = { ...group, tags };
  }
  return { group, created };
}

export interface RulesOutcome {
  /** The group's rules after the writes, as Neutron holds them. */
  rules: SecurityGroupRule[];
  created: number;
  deleted: number;
}

/** Makes the group hold exactly the desired rules; reads the group again only when it wrote. */
export async function syncPolicyRules(
  api: PolicyGroupApi,
  group: SecurityGroup,
  desired: readonly PolicySgRule[],
  signal: AbortSignal,
): Promise<RulesOutcome> {
  const plan = planRules(desired, group.security_group_rules ?? [], POLICY_RULES);
  if (plan.create.length === 0 && plan.delete.length === 0) {
    return { rules: group.security_group_rules ?? [], created: 0, deleted: 0 };
  }
  const out = await applyRulePlan(api, group.id, plan, { signal });
  const after = await api.network.securityGroups.get(group.id, { signal });
  return { rules: after.security_group_rules ?? [], ...out };
}

/** What `releasePolicyGroup` found. */
export type ReleaseOutcome =
  | { state: 'gone'; detached: number }
  /** A port took the group between the detach and the delete (a pod being wired): try again. */
  | { state: 'in-use'; detached: number };

/**
 * Takes the group off every port that has it — a port left with no group gets the default pod
 * groups, as upstream does for pods and pool ports — then deletes the group. A group already gone
 * is released.
 */
export async function releasePolicyGroup(
  api: PolicyGroupApi,
  groupId: string,
  defaultGroups: readonly string[],
  signal: AbortSignal,
): Promise<ReleaseOutcome> {
  const ports = await api.network.ports.list({ security_groups: groupId }, { signal }).all();
  let detached = 0;
  for (const port of ports) {
    const rest = port.security_groups.filter((g) => g !== groupId);
    try {
      await api.network.ports.update(
        port.id,
        { security_groups: rest.length > 0 ? rest : [...defaultGroups] },
        { signal, ifRevision: port.revision_number },
      );
      detached++;
    } catch (err) {
      // Gone, or changed since the list (412): the delete below says whether the group is free.
      if (!isNotFound(err) && !isPreconditionFailed(err)) throw err;
    }
  }
  try {
    await api.network.securityGroups.delete(groupId, { signal });
  } catch (err) {
    if (isNotFound(err)) return { state: 'gone', detached };
    if (isConflict(err)) return { state: 'in-use', detached };
    throw err;
  }
  return { state: 'gone', detached };
}
