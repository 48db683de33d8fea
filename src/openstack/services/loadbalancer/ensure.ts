/**
 * ensure(): one step towards the desired load balancer. See engine.ts for the contract.
 */
import type { LoadBalancer } from '../../loadbalancer/v2/loadbalancers.ts';
import type { FloatingIp } from '../../network/v2/floating-ips.ts';
import { applyStep } from './apply.ts';
import { afterWrite } from './backoff.ts';
import { createBody } from './build.ts';
import { busyChildren, pendingForChild } from './busy.ts';
import { pendingFor, tagsSupported, type EngineContext } from './context.ts';
import { findLoadBalancer, foreignTags } from './find.ts';
import { ensureFloatingIp, readAttached, type FloatingIpOutcome } from './floating-ip.ts';
import { fromError, Journal } from './outcome.ts';
import { ownership } from './ownership.ts';
import { refusedLoadBalancerInput } from './refusal.ts';
import { planChanges } from './plan.ts';
import { readState } from './read.ts';
import type { CallOptions, DesiredLoadBalancer, EnsureResult } from './types.ts';

export async function ensureLoadBalancer(
  ctx: EngineContext,
  desired: DesiredLoadBalancer,
  options: CallOptions = {},
): Promise<EnsureResult> {
  const journal = new Journal();
  try {
    return await ensureSteps(ctx, desired, journal, options);
  } catch (err) {
    return fromError(err, journal, ctx.policy, (said) => refusedLoadBalancerInput(said, desired));
  }
}

async function ensureSteps(
  ctx: EngineContext,
  desired: DesiredLoadBalancer,
  journal: Journal,
  options: CallOptions,
): Promise<EnsureResult> {
  const { api, policy } = ctx;
  const { identity } = desired;
  const tags = !identity.tagless && (await tagsSupported(api, options));
  const found = await findLoadBalancer(api, identity, options);

  if (found.kind === 'multiple')
    return journal.failed(
      'MultipleLoadBalancers',
      `${found.ids.length} load balancers are named ${found.name} (${found.ids.join(', ')}); delete the extra ones — none is picked and none is created`,
    );

  if (found.kind === 'none') {
    const lb = await api.loadBalancer.loadBalancers.create(
      createBody(desired, { tags, serial: desired.serialApiCalls ?? false }),
      { signal: options.signal },
    );
    // Octavia's worker starts when the API has accepted the create, not when we sent it: a slow
    // answer (300 ms on a busy API) counted in would bring the look before ACTIVE, and a look
    // that finds it PENDING waits by whole-second timestamps, a fine poll later.
    const accepted = ctx.now();
    journal.loadBalancer = lb;
    journal.owned = true;
    journal.actions.push({
      verb: 'create',
      resource: 'loadbalancer',
      id: lb.id,
      name: lb.name,
      detail: desired.serialApiCalls ? 'alone (serial API calls)' : 'fully populated',
    });
    // The VIP port exists as soon as the create returns: attach the address now, so it is ready
    // when Octavia is, instead of one more round after ACTIVE.
    const fip = await floatingIpStep(ctx, desired, lb, true, journal, options);
    const message = fip?.failure ? `; floating IP: ${fip.failure.message}` : '';
    return journal.pending(
      'LoadBalancerPending',
      // The floating IP's calls are part of the wait.
      Math.max(afterWrite(policy, 'create') - (ctx.now() - accepted), Math.round(policy.initialMs / 4), 1),
      `load balancer ${lb.id} created${message}`,
    );
  }

  const { lb, owned } = found;
  journal.loadBalancer = lb;
  journal.owned = owned;

  if (!owned) {
    const refused = shareRefusal(desired, lb);
    if (refused) return journal.failed(refused.reason, refused.message);
  }

  if (lb.provisioning_status === 'ERROR')
    return journal.failed(
      'LoadBalancerError',
      owned
        ? `load balancer ${lb.id} is in ERROR; it will be deleted and created again`
        : `shared load balancer ${lb.id} is in ERROR; its owner must repair it`,
      { recreate: owned },
    );
  if (lb.provisioning_status !== 'ACTIVE') return pendingFor(ctx, journal, lb, '');

  // Every read the next write depends on goes out at once: the floating IP beside Octavia's
  // children, the members of a load balancer no one shares beside its listeners and pools (but
  // not those of pools confirmed unchanged: serial mode updates members one by one, by id, and
  // reads them every time).
  const attached = desired.floatingIp ? readAttached(api, lb, options) : undefined;
  const serial = desired.serialApiCalls ?? false;
  const members = serial ? undefined : ctx.members;
  const state = await readState(api, lb, ownership(desired, owned), options, {
    membersAhead: owned && foreignTags(identity, lb.tags).length === 0,
    skipMembers: members && ((p) => members.unchanged(p)),
    likelySkipped: members && ((id) => members.known(id)),
  });
  const plan = planChanges(desired, state, {
    owned,
    tags,
    serial,
    adopted: owned && lb.name !== identity.name,
    members,
  });
  if (plan.kind === 'conflict') return journal.failed('PortConflict', plan.message);

  const fip = await floatingIpStep(ctx, desired, lb, owned, journal, options, attached);
  const fipNote = fip?.failure ? `; floating IP: ${fip.failure.message}` : '';
  // Nothing is written below a child Octavia still works on: it would be refused (409) until it settles.
  const [busy] = busyChildren(state, ctx.now());
  if (busy) return pendingForChild(ctx, journal, state, busy, fipNote);
  const [step, ...rest] = plan.steps;
  if (step) {
    journal.actions.push(await applyStep(api, step, options));
    const more = rest.length > 0 ? `, ${rest.length} more planned` : '';
    return journal.pending(
      'LoadBalancerPending',
      afterWrite(policy, 'update'),
      `load balancer ${lb.id}: ${journal.actions.at(-1)!.verb} ${journal.actions.at(-1)!.resource}${more}${fipNote}`,
    );
  }
  if (fip?.failure)
    return journal.failed(fip.failure.reason, fip.failure.message, {
      refused: fip.failure.refused,
      cloudMessage: fip.failure.cloudMessage,
    });
  return ready(journal, lb, fip?.floatingIp);
}

async function floatingIpStep(
  ctx: EngineContext,
  desired: DesiredLoadBalancer,
  lb: LoadBalancer,
  owned: boolean,
  journal: Journal,
  options: CallOptions,
  attached?: Promise<FloatingIp[]>,
): Promise<FloatingIpOutcome | undefined> {
  if (!desired.floatingIp) return undefined;
  const out = await ensureFloatingIp(ctx.api, lb, desired.floatingIp, owned, options, attached);
  journal.actions.push(...out.actions);
  journal.warnings.push(...out.warnings);
  return out;
}

/** OCCM's admission rules for a load balancer joined by id under another name. */
function shareRefusal(
  desired: DesiredLoadBalancer,
  lb: LoadBalancer,
): { reason: 'ShareLimit' | 'SharedInternal'; message: string } | undefined {
  const { identity } = desired;
  if (desired.floatingIp && !desired.floatingIp.external)
    return {
      reason: 'SharedInternal',
      message: `an internal service cannot share load balancer ${lb.id}: its address is public to every sharer`,
    };
  const joined = (lb.tags ?? []).includes(identity.name);
  const tagged = foreignTags(identity, lb.tags).length;
  // A maker known by its name alone (plan.ts leaves it untagged until someone shares it).
  const others = tagged + (tagged === 0 && (identity.taglessOwner?.(lb.name) ?? false) ? 1 : 0);
  if (!joined && identity.maxShared !== undefined && others + 1 > identity.maxShared)
    return {
      reason: 'ShareLimit',
      message: `load balancer ${lb.id} already serves ${others} services; max-shared-lb is ${identity.maxShared}`,
    };
  return undefined;
}

function ready(journal: Journal, lb: LoadBalancer, floatingIp: FloatingIp | undefined): EnsureResult {
  return {
    phase: 'Ready',
    ...journal.common(),
    loadBalancer: lb,
    vip: {
      address: lb.vip_address,
      portId: lb.vip_port_id,
      subnetId: lb.vip_subnet_id,
      networkId: lb.vip_network_id,
    },
    floatingIp,
    address: floatingIp?.floating_ip_address ?? lb.vip_address,
  };
}
