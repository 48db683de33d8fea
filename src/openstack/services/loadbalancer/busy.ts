/**
 * Children Octavia is still working on. A load balancer goes back to ACTIVE when its worker is done,
 * and its children with it; but a provider can leave a listener, pool, member or monitor in
 * PENDING_* under an ACTIVE load balancer (Octavia Zed did so to pools after a batch member update).
 * Every write below such a child is refused with 409 ("Pool <id> is immutable and cannot be
 * updated."), so the engine writes nothing while one is busy: it waits by the child's age, as for a
 * PENDING load balancer, and past `stuckAfterMs` reports it stuck, by name, with the remedy.
 */
import { pendingAgeMs, pendingHint } from './backoff.ts';
import type { EngineContext } from './context.ts';
import type { Journal } from './outcome.ts';
import type { CurrentState } from './read.ts';
import type { Pending } from './types.ts';

export type ChildKind = 'listener' | 'pool' | 'member' | 'health monitor';

export interface BusyChild {
  kind: ChildKind;
  id: string;
  name: string;
  status: string;
  created_at?: string | null | undefined;
  updated_at?: string | null | undefined;
}

/** This identity's children in a PENDING_* state, the longest-waiting first. */
export function busyChildren(state: CurrentState, now: number): BusyChild[] {
  const out: BusyChild[] = [];
  const add = (kind: ChildKind, o: Omit<BusyChild, 'kind' | 'status'> & { provisioning_status: string }) => {
    if (o.provisioning_status.startsWith('PENDING_'))
      out.push({
        kind,
        id: o.id,
        name: o.name,
        status: o.provisioning_status,
        created_at: o.created_at,
        updated_at: o.updated_at,
      });
  };
  for (const l of state.listeners) add('listener', l);
  for (const p of state.pools) add('pool', p);
  for (const members of state.members.values()) for (const m of members) add('member', m);
  for (const hm of state.monitors.values()) add('health monitor', hm);
  return out.sort((a, b) => pendingAgeMs(b, now) - pendingAgeMs(a, now));
}

/** Pending on the longest-waiting busy child, or Stuck once it has waited past the policy's threshold. */
export function pendingForChild(
  ctx: EngineContext,
  journal: Journal,
  state: CurrentState,
  child: BusyChild,
  note = '',
): Pending {
  const hint = pendingHint(child, ctx.now(), ctx.policy, child.status);
  const what = `${child.kind} ${child.id}${child.name ? ` (${child.name})` : ''}`;
  if (hint.stuck)
    return journal.pending(
      'LoadBalancerStuck',
      hint.retryAfterMs,
      `${what} of load balancer ${state.lb.id} has been ${child.status} for ${Math.round(hint.ageMs / 1000)} s ` +
        `while the load balancer is ${state.lb.provisioning_status}: Octavia refuses every change below it until an operator ` +
        `sets it back to ACTIVE (Octavia's database) or fails the load balancer over${note}`,
    );
  return journal.pending(
    'LoadBalancerPending',
    hint.retryAfterMs,
    `${what} of load balancer ${state.lb.id} is ${child.status}${note}`,
  );
}
