/**
 * CAPO's managed security groups (`k8s-cluster-<ns>-<name>-secgroup-{controlplane,worker,bastion}`):
 * each group is found by name or created, its tags set to the cluster's, then its rules diffed
 * against security-group-rules.ts by the shared plan (src/openstack/services/securitygroup, with
 * descriptions compared, as CAPO does): rules nobody wants are deleted first (a rule allowing the
 * same traffic as a new one would make Neutron refuse the new one), then the missing ones created.
 * Groups are created before any rule, since rules refer to the groups by id.
 *
 * The bastion group exists only while the bastion is enabled; once disabled, it is deleted as soon
 * as nothing uses it (CAPO #2113: best effort on each reconcile, and again on cluster deletion).
 */
import { isConflict, isNotFound } from '../../openstack/core/errors.ts';
import type { SecurityGroup } from '../../openstack/network/v2/security-groups.ts';
import { applyRulePlan, planRules } from '../../openstack/services/securitygroup/index.ts';
import { DependencyError } from '../../openstack/services/server/index.ts';
import type { OpenStackClusterSpec } from '../api/index.ts';
import type { ClusterApi } from './api.ts';
import { SECURITY_GROUP_DESCRIPTION, securityGroupName, type ManagedSecurityGroupRole } from './names.ts';
import { CAPO_RULES, desiredRule, desiredRules, type GroupIDs } from './security-group-rules.ts';
import { sameTags } from './tags.ts';

export interface SecurityGroupStatus {
  id: string;
  name: string;
}

export interface SecurityGroupsOutcome {
  controlPlane: SecurityGroupStatus;
  worker: SecurityGroupStatus;
  bastion?: SecurityGroupStatus | undefined;
  /** Rules created and deleted, for the log. */
  created: number;
  deleted: number;
}

export interface SecurityGroupsContext {
  api: ClusterApi;
  spec: OpenStackClusterSpec;
  resourceName: string;
  bastionEnabled: boolean;
  subnetCidrs: readonly string[];
  signal: AbortSignal;
  onCreate?: ((what: string, name: string, id: string) => void) | undefined;
}

async function findGroup(
  api: ClusterApi,
  name: string,
  signal: AbortSignal,
): Promise<SecurityGroup | undefined> {
  const found = await api.network.securityGroups.list({ name }, { signal }).all();
  if (found.length > 1)
    throw new DependencyError(
      'security group',
      'Ambiguous',
      `${found.length} security groups are named ${name} (${found.map((g) => g.id).join(', ')}); delete the extra ones`,
      found.map((g) => g.id),
    );
  return found[0];
}

async function getOrCreate(
  ctx: SecurityGroupsContext,
  role: ManagedSecurityGroupRole,
): Promise<SecurityGroup> {
  const { api, signal } = ctx;
  const name = securityGroupName(ctx.resourceName, role);
  let group = await findGroup(api, name, signal);
  if (!group) {
    group = await api.network.securityGroups.create(
      { name, description: SECURITY_GROUP_DESCRIPTION },
      { signal },
    );
    ctx.onCreate?.('security group', name, group.id);
  }
  const tags = ctx.spec.tags ?? [];
  if (!sameTags(group.tags, tags)) {
    await api.network.tags.replace('security-groups', group.id, tags, { signal });
    group = { ...group, tags: [...tags] };
  }
  return group;
}

export async function reconcileSecurityGroups(
  ctx: SecurityGroupsContext,
): Promise<SecurityGroupsOutcome | undefined> {
  const { api, signal } = ctx;
  if (!ctx.spec.managedSecurityGroups) return undefined;
  if (!ctx.bastionEnabled)
    await deleteGroupIfUnused(api, securityGroupName(ctx.resourceName, 'bastion'), signal);

  const roles: ManagedSecurityGroupRole[] = ctx.bastionEnabled
    ? ['controlplane', 'worker', 'bastion']
    : ['controlplane', 'worker'];
  const groups = new Map<ManagedSecurityGroupRole, SecurityGroup>();
  for (const role of roles) groups.set(role, await getOrCreate(ctx, role));
  const ids: GroupIDs = Object.fromEntries([...groups].map(([role, g]) => [role, g.id]));

  const desired = desiredRules({
    spec: ctx.spec,
    ids,
    subnetCidrs: ctx.subnetCidrs,
    bastionEnabled: ctx.bastionEnabled,
  });
  let created = 0;
  let deleted = 0;
  for (const [role, group] of groups) {
    const plan = planRules(
      (desired[role] ?? []).map(desiredRule),
      group.security_group_rules ?? [],
      CAPO_RULES,
    );
    const out = await applyRulePlan(api, group.id, plan, { signal });
    created += out.created;
    deleted += out.deleted;
  }
  const status = (role: ManagedSecurityGroupRole) => {
    const g = groups.get(role);
    return g ? { id: g.id, name: g.name } : undefined;
  };
  return {
    controlPlane: status('controlplane')!,
    worker: status('worker')!,
    bastion: status('bastion'),
    created,
    deleted,
  };
}

/** Deletes a group by name unless a port still uses it; true when it is gone. */
export async function deleteGroupIfUnused(
  api: ClusterApi,
  name: string,
  signal: AbortSignal,
): Promise<boolean> {
  const group = await findGroup(api, name, signal);
  if (!group) return true;
  try {
    await api.network.securityGroups.delete(group.id, { signal });
    return true;
  } catch (err) {
    if (isNotFound(err)) return true;
    if (isConflict(err)) return false;
    throw err;
  }
}

/** Cluster deletion: every managed group, the bastion's too whatever the spec says now. */
export async function deleteSecurityGroups(
  api: ClusterApi,
  resourceName: string,
  signal: AbortSignal,
): Promise<{ remaining: string[] }> {
  const remaining: string[] = [];
  for (const role of ['bastion', 'worker', 'controlplane'] as const) {
    const name = securityGroupName(resourceName, role);
    if (!(await deleteGroupIfUnused(api, name, signal))) remaining.push(name);
  }
  return { remaining };
}
