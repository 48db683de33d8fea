/**
 * A Service's member security group in Neutron (OCCM's `loadbalancer_sg.go`, run when
 * `[LoadBalancer] manage-security-groups` is on): one group per Service, named
 * `lb-sg-<uid>-<ns>-<name>`, holding the ingress rules of security-group-rules.ts, and carried by
 * exactly the ports that are load balancer members.
 *
 * Everything is found again on each pass (the group by name, the ports that carry it by a filter,
 * a member's port by its fixed IP on the member subnet), so a crash at any point is repaired by the
 * next reconcile and nothing depends on memory. A port's `security_groups` is a list that other
 * writers (Nova, users, another Service's group) change too: each update is conditional on the
 * port's `revision_number` (Neutron's `If-Match`) when the cloud offers it, and re-read and retried
 * a bounded number of times on a 412, where OCCM writes blindly.
 */
import { isNotFound, isPreconditionFailed } from '../../../openstack/core/errors.ts';
import type { Port } from '../../../openstack/network/v2/ports.ts';
import type { SecurityGroup } from '../../../openstack/network/v2/security-groups.ts';
import type { OpenStackApi } from '../../secret/rotating-client.ts';
import { applyRulePlan, planRules } from '../../../openstack/services/securitygroup/index.ts';
import { desiredRule, MEMBER_RULES, type MemberRule } from '../../service/security-group-rules.ts';

export interface MemberSecurityGroup {
  name: string;
  description: string;
  rules: readonly MemberRule[];
  /** The member subnet: a member's port is the one holding its address there. */
  subnetId: string;
  members: readonly { name: string; address: string }[];
}

/** What ensure() and remove() wrote, as progress actions. */
export const SecurityGroupAction = {
  Group: 'security-group',
  Rule: 'security-group-rule',
  /** A member port gained or lost the group: part of a member change. */
  Port: 'member-port',
} as const;

export interface SecurityGroupOutcome {
  id: string;
  actions: string[];
  /** Members whose address no port on the member subnet holds: nothing to protect yet. */
  portless: string[];
  /** Members whose port has port security off: skipped, as OCCM does (PR #2455). */
  unsecured: string[];
}

export interface MemberSecurityGroupsOptions {
  /** Tries of one port update that loses a revision race (412) before the reconcile fails. */
  portUpdateAttempts?: number;
  /** Member ports looked up and updated at once. */
  concurrency?: number;
}

export class MemberSecurityGroups {
  private readonly os: OpenStackApi;
  private readonly attempts: number;
  private readonly concurrency: number;

  constructor(os: OpenStackApi, opts: MemberSecurityGroupsOptions = {}) {
    this.os = os;
    this.attempts = opts.portUpdateAttempts ?? 5;
    this.concurrency = opts.concurrency ?? 4;
  }

  async ensure(target: MemberSecurityGroup, signal: AbortSignal): Promise<SecurityGroupOutcome> {
    const actions: string[] = [];
    const found = await this.named(target.name, signal);
    // A create whose answer was lost leaves a twin: keep the oldest, clear the others out.
    const [kept, ...twins] = found;
    for (const twin of twins) actions.push(...(await this.removeGroup(twin, signal)));
    let group = kept;
    if (!group) {
      group = await this.os.network.securityGroups.create(
        { name: target.name, description: target.description },
        { signal },
      );
      actions.push(SecurityGroupAction.Group);
    }
    actions.push(...(await this.ensureRules(group, target.rules, signal)));
    const ports = await this.ensurePorts(group.id, target, signal);
    actions.push(...ports.actions);
    return { id: group.id, actions, portless: ports.portless, unsecured: ports.unsecured };
  }

  /** Takes every group of this name off the ports that carry it, then deletes it. */
  async remove(name: string, signal: AbortSignal): Promise<string[]> {
    const actions: string[] = [];
    for (const group of await this.named(name, signal))
      actions.push(...(await this.removeGroup(group, signal)));
    return actions;
  }

  private async named(name: string, signal: AbortSignal): Promise<SecurityGroup[]> {
    const groups = await this.os.network.securityGroups.list({ name }, { signal }).all();
    return groups
      .filter((g) => g.name === name)
      .sort(
        (a, b) =>
          (a.created_at ?? '').localeCompare(b.created_at ?? '') || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      );
  }

  private async ensureRules(
    group: SecurityGroup,
    rules: readonly MemberRule[],
    signal: AbortSignal,
  ): Promise<string[]> {
    const plan = planRules(rules.map(desiredRule), group.security_group_rules ?? [], MEMBER_RULES);
    const { created, deleted } = await applyRulePlan(this.os, group.id, plan, { signal });
    return new Array<string>(created + deleted).fill(SecurityGroupAction.Rule);
  }

  private async ensurePorts(
    groupId: string,
    target: MemberSecurityGroup,
    signal: AbortSignal,
  ): Promise<{ actions: string[]; portless: string[]; unsecured: string[] }> {
    const carrying = await this.carrying(groupId, signal);
    const actions: string[] = [];
    const portless: string[] = [];
    const unsecured: string[] = [];
    const members = new Set<string>();
    const missing = target.members.filter((m) => {
      const port = carrying.find((p) => holds(p, m.address, target.subnetId));
      if (port) members.add(port.id);
      return !port;
    });
    await limited(missing, this.concurrency, async (m) => {
      const found = await this.os.network.ports
        .list({ fixed_ips: [{ ip_address: m.address, subnet_id: target.subnetId }] }, { signal })
        .all();
      const port = found.find((p) => holds(p, m.address, target.subnetId));
      if (!port) {
        portless.push(m.name);
        return;
      }
      if (port.port_security_enabled === false) {
        unsecured.push(m.name);
        return;
      }
      members.add(port.id);
      const added = await this.changeGroups(
        port,
        (groups) => (groups.includes(groupId) ? undefined : [...groups, groupId]),
        signal,
      );
      if (added) actions.push(SecurityGroupAction.Port);
    });
    const leaving = carrying.filter((p) => !members.has(p.id));
    await limited(leaving, this.concurrency, async (p) => {
      if (await this.detach(p, groupId, signal)) actions.push(SecurityGroupAction.Port);
    });
    return { actions, portless: portless.sort(), unsecured: unsecured.sort() };
  }

  private async removeGroup(group: SecurityGroup, signal: AbortSignal): Promise<string[]> {
    const actions: string[] = [];
    const carrying = await this.carrying(group.id, signal);
    await limited(carrying, this.concurrency, async (p) => {
      if (await this.detach(p, group.id, signal)) actions.push(SecurityGroupAction.Port);
    });
    try {
      await this.os.network.securityGroups.delete(group.id, { signal });
      actions.push(SecurityGroupAction.Group);
    } catch (err) {
      // A 409 (a port took it meanwhile) fails this pass; the next one detaches that port too.
      if (!isNotFound(err)) throw err;
    }
    return actions;
  }

  /** The ports that carry the group; the check after the filter keeps a cloud that ignores it harmless. */
  private async carrying(groupId: string, signal: AbortSignal): Promise<Port[]> {
    const ports = await this.os.network.ports.list({ security_groups: groupId }, { signal }).all();
    return ports.filter((p) => p.security_groups.includes(groupId));
  }

  private detach(port: Port, groupId: string, signal: AbortSignal): Promise<boolean> {
    return this.changeGroups(
      port,
      (groups) => (groups.includes(groupId) ? groups.filter((g) => g !== groupId) : undefined),
      signal,
    );
  }

  /**
   * Read-modify-write of a port's groups; `change` answers undefined when nothing needs writing.
   * True when this call wrote; a port deleted meanwhile is no error (it needs nothing any more).
   */
  private async changeGroups(
    port: Port,
    change: (groups: readonly string[]) => string[] | undefined,
    signal: AbortSignal,
  ): Promise<boolean> {
    const conditional = await this.os.network.extensions.has('revision-if-match', { signal });
    let current = port;
    for (let attempt = 1; ; attempt++) {
      const next = change(current.security_groups);
      if (next === undefined) return false;
      try {
        await this.os.network.ports.update(
          current.id,
          { security_groups: next },
          { signal, ifRevision: conditional ? current.revision_number : undefined },
        );
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        if (!isPreconditionFailed(err) || attempt >= this.attempts) throw err;
      }
      try {
        current = await this.os.network.ports.get(current.id, { signal });
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    }
  }
}

/** The port holds the address on the member subnet. */
function holds(port: Port, address: string, subnetId: string): boolean {
  return port.fixed_ips.some((f) => f.ip_address === address && f.subnet_id === subnetId);
}

/** Runs `fn` over the items, at most `limit` at a time; the first failure is thrown once all have settled. */
async function limited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (err) {
        errors.push(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (errors.length > 0) throw errors[0];
}
