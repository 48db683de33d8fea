/**
 * The `kuryrnetworkpolicy` controller (upstream's KuryrNetworkPolicyHandler): a KuryrNetworkPolicy's
 * one security group, holding exactly its spec's rules (src/kuryr/policy/security-group.ts).
 *
 * Per reconcile: the group the status names, else the one a crash left (by name and description),
 * else a new one, tagged as ours; its id goes to `status.securityGroupId` before any rule is
 * written, so a restart finds the group by id. Then the rules Neutron holds are compared with the
 * spec's and only the difference written; `status.securityGroupRules` (Neutron's rules, with ids)
 * and `status.podSelector` follow. Neutron is read on every pass — one GET — so a rule deleted
 * behind our back comes back, and the status is never trusted over the cloud.
 *
 * Which ports carry the group is the pod-label controller's (the policy driver decides), woken by
 * this object's `status.securityGroupId` and `spec.podSelector`.
 *
 * Delete: the group is taken off every port that has it (pod ports and pool ports alike; a port
 * left with none gets `[neutron_defaults] pod_security_groups`), then deleted; a port that took it
 * meanwhile (409 in use) is a requeue, waiting by the deletion's age. Then the finalizer.
 */
import {
  addFinalizer,
  hasFinalizer,
  isDeleting,
  OwnWrites,
  removeFinalizer,
  specOrMetadataChanged,
  mergePatch,
  timeMs,
  type Manager,
  type Request,
  type Result,
} from '../../kube/index.ts';
import { OpenStackHttpError } from '../../openstack/core/errors.ts';
import type { SecurityGroupRule } from '../../openstack/network/v2/security-group-rules.ts';
import { ageMs, waitByAge } from '../../openstack/services/wait-by-age.ts';
import { Finalizers, kuryrKinds, type KuryrNetworkPolicy } from '../api/index.ts';
import type { KuryrContext } from '../context.ts';
import { usePolicySecurityGroups } from '../policy/driver.ts';
import type { PolicySgRule } from '../policy/rules.ts';
import {
  ensurePolicyGroup,
  findPolicyGroup,
  releasePolicyGroup,
  syncPolicyRules,
} from '../policy/security-group.ts';

export const KURYR_NETWORK_POLICY_CONTROLLER = 'kuryrnetworkpolicy';

export const KuryrNetworkPolicyEventReasons = {
  SecurityGroupCreated: 'SecurityGroupCreated',
  /** Upstream's reason: the group or its rules could not be written (a quota, a refused rule); retried. */
  FailedToAddSecurityGroup: 'FailedToAddSecurityGroup',
  /** A port still carries the group: the delete waits. */
  SecurityGroupInUse: 'SecurityGroupInUse',
} as const;

/** Waiting for a port to let go of a group being deleted: by the deletion's age, 1 s → 10 s. */
const IN_USE_WAIT = { initialMs: 1_000, maxMs: 10_000 };

type StatusRule = NonNullable<NonNullable<KuryrNetworkPolicy['status']>['securityGroupRules']>[number];

export function registerKuryrNetworkPolicyController(mgr: Manager, ctx: KuryrContext): void {
  usePolicySecurityGroups(mgr.client, ctx);
  const own = new OwnWrites<KuryrNetworkPolicy>();
  const r = new KuryrNetworkPolicyReconciler(mgr, ctx, own);
  mgr
    .controller(KURYR_NETWORK_POLICY_CONTROLLER)
    .for(kuryrKinds.KuryrNetworkPolicy, { predicates: [specOrMetadataChanged(), own.predicate()] })
    .complete(r);
}

/** A rule of the spec as the shared plan takes it; one that names no direction or ethertype is none. */
function desiredRule(rule: KuryrNetworkPolicy['spec']['ingressSgRules'][number]): PolicySgRule[] {
  const r = rule.sgRule;
  if (
    (r.direction !== 'ingress' && r.direction !== 'egress') ||
    (r.ethertype !== 'IPv4' && r.ethertype !== 'IPv6')
  )
    return [];
  return [{ ...r, direction: r.direction, ethertype: r.ethertype, description: r.description ?? '' }];
}

/** Neutron's rule as upstream records it in the status: its fields, none null. */
export function statusRule(r: SecurityGroupRule): StatusRule {
  const out: StatusRule = {
    id: r.id,
    direction: r.direction,
    ethertype: r.ethertype,
    security_group_id: r.security_group_id,
  };
  if (r.description) out.description = r.description;
  if (r.protocol !== null) out.protocol = r.protocol;
  if (r.port_range_min !== null) out.port_range_min = r.port_range_min;
  if (r.port_range_max !== null) out.port_range_max = r.port_range_max;
  if (r.remote_ip_prefix !== null) out.remote_ip_prefix = r.remote_ip_prefix;
  return out;
}

class KuryrNetworkPolicyReconciler {
  private readonly mgr: Manager;
  private readonly ctx: KuryrContext;
  private readonly own: OwnWrites<KuryrNetworkPolicy>;

  constructor(mgr: Manager, ctx: KuryrContext, own: OwnWrites<KuryrNetworkPolicy>) {
    this.mgr = mgr;
    this.ctx = ctx;
    this.own = own;
  }

  async reconcile(req: Request, signal: AbortSignal): Promise<Result> {
    const cached = await this.mgr.client.get(kuryrKinds.KuryrNetworkPolicy, req, { signal });
    if (!cached) return {};
    if (isDeleting(cached)) return this.finalize(cached, signal);
    try {
      return await this.apply(cached, signal);
    } catch (err) {
      if (OpenStackHttpError.is(err)) {
        // Where the user looks: the object, with Neutron's words and request id; the queue retries.
        this.mgr.events.event(
          cached,
          'Warning',
          KuryrNetworkPolicyEventReasons.FailedToAddSecurityGroup,
          `Writing the policy's security group failed: ${err.message}`,
        );
      }
      throw err;
    }
  }

  private async apply(cached: KuryrNetworkPolicy, signal: AbortSignal): Promise<Result> {
    const { client } = this.mgr;

    const before = cached;
    const knp = await addFinalizer(
      client.api,
      kuryrKinds.KuryrNetworkPolicy,
      before,
      Finalizers.NetworkPolicy,
      {
        signal,
      },
    );
    this.own.record(
      before,
      { ...before, metadata: { ...before.metadata, finalizers: knp.metadata?.finalizers } },
      knp,
    );
    const ref = { namespace: knp.metadata?.namespace ?? '', name: knp.metadata?.name ?? '' };
    const { group, created } = await ensurePolicyGroup(this.ctx.os, ref, knp.status?.securityGroupId, {
      tags: this.ctx.tags,
      projectId: this.ctx.projectId,
      signal,
    });
    let current = knp;
    if (knp.status?.securityGroupId !== group.id) {
      // Recorded before any rule goes in: a restart finds this group by id, not by a search.
      current = await this.writeStatus(knp, { securityGroupId: group.id, securityGroupRules: [] }, signal);
      if (created) {
        this.mgr.events.event(
          knp,
          'Normal',
          KuryrNetworkPolicyEventReasons.SecurityGroupCreated,
          `Created security group ${group.name} (${group.id})`,
        );
      }
    }
    const desired = [...knp.spec.ingressSgRules, ...knp.spec.egressSgRules].flatMap(desiredRule);
    const out = await syncPolicyRules(this.ctx.os, group, desired, signal);
    await this.writeStatus(
      current,
      {
        securityGroupId: group.id,
        securityGroupRules: out.rules.map(statusRule),
        podSelector: { ...knp.spec.podSelector },
      },
      signal,
    );
    return {};
  }

  /** The status goes with the object (upstream's CRDs have no status subresource); nothing is sent when it holds already. */
  private async writeStatus(
    knp: KuryrNetworkPolicy,
    status: NonNullable<KuryrNetworkPolicy['status']>,
    signal: AbortSignal,
  ): Promise<KuryrNetworkPolicy> {
    const intended = { ...knp, status: { ...knp.status, ...status } };
    const stored = await mergePatch(this.mgr.client.api, kuryrKinds.KuryrNetworkPolicy, knp, intended, {
      signal,
    });
    return this.own.record(knp, intended, stored);
  }

  private async finalize(knp: KuryrNetworkPolicy, signal: AbortSignal): Promise<Result> {
    if (!hasFinalizer(knp, Finalizers.NetworkPolicy)) return {};
    const ref = { namespace: knp.metadata?.namespace ?? '', name: knp.metadata?.name ?? '' };
    // A group made before its id was recorded is found as ensure would have found it.
    const id = knp.status?.securityGroupId || (await findPolicyGroup(this.ctx.os, ref, signal))?.id;
    if (id) {
      const out = await releasePolicyGroup(
        this.ctx.os,
        id,
        this.ctx.options.neutronDefaults.podSecurityGroups,
        signal,
      );
      if (out.state === 'in-use') {
        this.mgr.events.event(
          knp,
          'Normal',
          KuryrNetworkPolicyEventReasons.SecurityGroupInUse,
          `Security group ${id} is still used by a port; deleting it again`,
        );
        const age = ageMs(timeMs(knp.metadata?.deletionTimestamp), this.mgr.clock.now());
        return { requeueAfterMs: waitByAge(age, IN_USE_WAIT) };
      }
    }
    await removeFinalizer(this.mgr.client.api, kuryrKinds.KuryrNetworkPolicy, knp, Finalizers.NetworkPolicy, {
      signal,
    });
    return {};
  }
}
