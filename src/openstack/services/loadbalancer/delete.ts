/**
 * Removal, one step per call like ensure, idempotent whatever state an earlier (killed) call left:
 * - a load balancer this identity owns and shares with nobody: the floating IP released per the
 *   rules (ours deleted unless kept, anyone else's detached) BEFORE the load balancer goes, since
 *   afterwards nothing would lead to it; then one cascade DELETE (serial mode: pools, listeners,
 *   then the load balancer, one call each, as providers without cascade need);
 * - a shared load balancer (other identities' tags on it, or joined by id): only this identity's
 *   pools and listeners are deleted, then its tag removed; the load balancer and its address stay;
 * - nothing found: floating IPs we created and left unattached (their load balancer deleted out of
 *   band) are deleted by their exact description; then Deleted.
 * Deleting waits for nothing: PENDING_DELETE is reported as Pending until the load balancer is gone.
 */
import { applyStep } from './apply.ts';
import { busyChildren, pendingForChild } from './busy.ts';
import { findLoadBalancer, foreignTags } from './find.ts';
import { releaseFloatingIp, releaseOrphanFloatingIps } from './floating-ip.ts';
import { fromError, Journal } from './outcome.ts';
import { ownership } from './ownership.ts';
import { planRemoval } from './plan.ts';
import { readState } from './read.ts';
import { pendingFor, type EngineContext } from './context.ts';
import { afterWrite, pendingHint } from './backoff.ts';
import type { CallOptions, Deleted, DesiredLoadBalancer, RemoveResult } from './types.ts';

export async function removeLoadBalancer(
  ctx: EngineContext,
  desired: DesiredLoadBalancer,
  options: CallOptions = {},
): Promise<RemoveResult> {
  const journal = new Journal();
  try {
    return await removeSteps(ctx, desired, journal, options);
  } catch (err) {
    return fromError(err, journal, ctx.policy);
  }
}

async function removeSteps(
  ctx: EngineContext,
  desired: DesiredLoadBalancer,
  journal: Journal,
  options: CallOptions,
): Promise<RemoveResult> {
  const { api, policy } = ctx;
  const { identity } = desired;
  const signal = options.signal;
  const found = await findLoadBalancer(api, identity, { signal, includeDeleting: true });
  if (found.kind === 'multiple')
    return journal.failed(
      'MultipleLoadBalancers',
      `${found.ids.length} load balancers are named ${found.name} (${found.ids.join(', ')}); none is deleted on a guess`,
    );
  if (found.kind === 'none' || found.lb.provisioning_status === 'DELETED') {
    if (desired.floatingIp)
      journal.actions.push(...(await releaseOrphanFloatingIps(api, desired.floatingIp, options)));
    return deleted(journal);
  }

  const { lb, owned } = found;
  journal.loadBalancer = lb;
  journal.owned = owned;
  if (lb.provisioning_status === 'PENDING_DELETE') {
    const hint = pendingHint(lb, ctx.now(), policy, lb.provisioning_status);
    return journal.pending('Deleting', hint.retryAfterMs, `load balancer ${lb.id} is being deleted`);
  }
  if (lb.provisioning_status !== 'ACTIVE' && lb.provisioning_status !== 'ERROR')
    return pendingFor(ctx, journal, lb, ', waiting to delete it');

  // OCCM's needDeleteLB: the load balancer goes with the last identity on it, if it is one of
  // ours (our name, or the shared-tag prefix's); one made outside is never deleted.
  const prefix = identity.sharedTagPrefix;
  const oursToDelete = owned || (prefix !== undefined && lb.name.startsWith(prefix));
  const whole = oursToDelete && foreignTags(identity, lb.tags).length === 0;
  if (whole) {
    if (desired.floatingIp && lb.vip_port_id) {
      // Still under its legacy name, the load balancer is the in-tree provider's, which described
      // none of its floating IPs and deleted its address with it: so does its heir, unless the
      // Service named that address (the user's: detached only).
      const inTree =
        (identity.legacyNames ?? []).includes(lb.name) && desired.floatingIp.address === undefined;
      const intent = inTree ? { ...desired.floatingIp, ownsUndescribed: true } : desired.floatingIp;
      const attached = await api.network.floatingIps.list({ port_id: lb.vip_port_id }, { signal }).all();
      for (const fip of attached) journal.actions.push(await releaseFloatingIp(api, fip, intent, options));
    }
    // A load balancer in ERROR takes no child deletes: cascade is the only way, in any mode.
    const serial =
      ((desired.serialApiCalls ?? false) || desired.cascadeDelete === false) &&
      lb.provisioning_status === 'ACTIVE';
    if (serial) {
      const state = await readState(api, lb, ownership(desired, true), options);
      const [busy] = busyChildren(state, ctx.now());
      if (busy) return pendingForChild(ctx, journal, state, busy, ', waiting to delete it');
      const [step, ...rest] = planRemoval(state);
      if (step) {
        journal.actions.push(await applyStep(api, step, options));
        return journal.pending(
          'Deleting',
          afterWrite(policy, 'update'),
          `${rest.length + 1} objects left before load balancer ${lb.id}`,
        );
      }
    }
    await api.loadBalancer.loadBalancers.delete(lb.id, { signal, cascade: !serial });
    journal.actions.push({
      verb: 'delete',
      resource: 'loadbalancer',
      id: lb.id,
      name: lb.name,
      detail: serial ? 'empty' : 'cascade',
    });
    return journal.pending('Deleting', afterWrite(policy, 'delete'), `load balancer ${lb.id} deleted`);
  }

  if (lb.provisioning_status === 'ERROR')
    return journal.failed(
      'LoadBalancerError',
      `shared load balancer ${lb.id} is in ERROR: this service's listeners cannot be removed until it is repaired`,
    );
  const state = await readState(api, lb, ownership(desired, owned), options);
  const [busy] = busyChildren(state, ctx.now());
  if (busy) return pendingForChild(ctx, journal, state, busy, ', waiting to remove it');
  const [step, ...rest] = planRemoval(state);
  if (step) {
    journal.actions.push(await applyStep(api, step, options));
    return journal.pending(
      'Deleting',
      afterWrite(policy, 'update'),
      `${rest.length} more of this service's objects on shared load balancer ${lb.id}`,
    );
  }
  const tags = lb.tags ?? [];
  if (tags.includes(identity.name)) {
    await api.loadBalancer.loadBalancers.update(
      lb.id,
      { tags: tags.filter((t) => t !== identity.name) },
      { signal },
    );
    journal.actions.push({
      verb: 'update',
      resource: 'loadbalancer',
      id: lb.id,
      detail: `untag ${identity.name}`,
    });
    return journal.pending('Deleting', afterWrite(policy, 'update'), `left shared load balancer ${lb.id}`);
  }
  return deleted(journal);
}

function deleted(journal: Journal): Deleted {
  return { phase: 'Deleted', ...journal.common() };
}
