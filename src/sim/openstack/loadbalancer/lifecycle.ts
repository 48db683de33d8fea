/**
 * Octavia's provisioning state machine. A write locks the load balancer (ACTIVE → PENDING_*),
 * marks the touched objects PENDING_CREATE/UPDATE/DELETE, and the controller worker settles them
 * later; meanwhile every other write on the tree is refused with 409.
 */
import type { EmulatedCloud } from '../core/cloud.ts';
import type { TransitionKey } from '../core/timing.ts';
import { immutable, lbPendingState } from './errors.ts';
import { StoredMember } from './member-record.ts';
import { octaviaTime, type LoadBalancerRecord, type ProvisioningStatus, type Provisioned } from './model.ts';
import type { OctaviaStore } from './store.ts';

export interface Change {
  record: Provisioned;
  pending: ProvisioningStatus;
  /** What the worker leaves behind: ACTIVE, ERROR (failed create) or DELETED (removed). */
  final: 'ACTIVE' | 'ERROR' | 'DELETED';
  /** Unlinks the record from the store when `final` is DELETED. */
  remove?: () => void;
}

export interface Transition {
  lb: LoadBalancerRecord;
  lbPending: 'PENDING_CREATE' | 'PENDING_UPDATE' | 'PENDING_DELETE';
  lbFinal: 'ACTIVE' | 'ERROR' | 'DELETED';
  changes: Change[];
  key: TransitionKey;
  /** The worker never finishes: an injected `stuck` fault, or the noop provider. */
  stuck?: boolean;
  /** Runs once the load balancer is gone (VIP port release). */
  afterDelete?: () => void;
}

/** A parent a write locks: PENDING_UPDATE until the worker is done, then ACTIVE again. */
export function updating(record: Provisioned): Change {
  return { record, pending: 'PENDING_UPDATE', final: 'ACTIVE' };
}

export function creating(record: Provisioned, final: 'ACTIVE' | 'ERROR'): Change {
  return { record, pending: 'PENDING_CREATE', final };
}

/** Without `remove` the record goes with its parent, whose own `remove` unlinks it. */
export function deleting(record: Provisioned, remove?: () => void): Change {
  return remove
    ? { record, pending: 'PENDING_DELETE', final: 'DELETED', remove }
    : { record, pending: 'PENDING_DELETE', final: 'DELETED' };
}

export interface CreateFaults {
  /** ERROR when an `error-on-create` fault for the resource was consumed. */
  final: 'ACTIVE' | 'ERROR';
  /** True when a `stuck` fault for the resource was consumed: the worker never finishes. */
  stuck: boolean;
}

/** Providers whose controller never acts: objects stay in their PENDING state. */
const INERT_PROVIDERS = new Set(['noop_driver']);

export class Lifecycle {
  private readonly cloud: EmulatedCloud;
  private readonly store: OctaviaStore;

  constructor(cloud: EmulatedCloud, store: OctaviaStore) {
    this.cloud = cloud;
    this.store = store;
  }

  /** A child write needs the load balancer ACTIVE (Octavia's MUTABLE_STATUSES). */
  assertChildWritable(lb: LoadBalancerRecord): void {
    if (lb.provisioning_status !== 'ACTIVE') throw immutable('Load Balancer', lb.id);
  }

  /** PUT and failover need ACTIVE; DELETE also accepts ERROR (DELETABLE_STATUSES). */
  assertLbWritable(lb: LoadBalancerRecord, action: 'update' | 'delete' | 'failover'): void {
    const ok =
      lb.provisioning_status === 'ACTIVE' || (action !== 'update' && lb.provisioning_status === 'ERROR');
    if (!ok) throw lbPendingState(lb.provisioning_status, lb.id);
  }

  /** Members and the health monitor need their pool ACTIVE as well as the load balancer. */
  assertPoolChildWritable(pool: Provisioned, lb: LoadBalancerRecord): void {
    if (pool.provisioning_status !== 'ACTIVE') throw immutable('Pool', pool.id);
    this.assertChildWritable(lb);
  }

  /** Consumes the state faults aimed at the next create of `resource` (loadbalancer, listener, pool...). */
  createFaults(resource: string): CreateFaults {
    const error = this.cloud.faults.take('error-on-create', 'octavia', resource);
    const stuck = this.cloud.faults.take('stuck', 'octavia', resource);
    return { final: error ? 'ERROR' : 'ACTIVE', stuck };
  }

  /**
   * A write on an existing load balancer: it and the parents in `locks` stay PENDING_UPDATE while
   * the worker settles `changes`, then go back to ACTIVE. `begin` stamps updated_at on everything
   * that is not being created, so handlers need not.
   */
  write(
    lb: LoadBalancerRecord,
    locks: readonly Provisioned[],
    changes: readonly Change[],
    key: TransitionKey,
    stuck = false,
  ): void {
    this.begin({
      lb,
      lbPending: 'PENDING_UPDATE',
      lbFinal: 'ACTIVE',
      changes: [...locks.map(updating), ...changes],
      key,
      stuck,
    });
  }

  /** `created` were just added under `lb`; a create fault for `resource` decides how they end. */
  createChild(
    lb: LoadBalancerRecord,
    locks: readonly Provisioned[],
    resource: string,
    created: readonly Provisioned[],
  ): void {
    const faults = this.createFaults(resource);
    const changes = created.map((record) => creating(record, faults.final));
    this.write(lb, locks, changes, 'octavia.child.create', faults.stuck);
  }

  updateChild(lb: LoadBalancerRecord, locks: readonly Provisioned[], record: Provisioned): void {
    this.write(lb, locks, [updating(record)], 'octavia.child.update');
  }

  /** `along` are deleted with `record` (a pool's members and monitor); `remove` unlinks them all. */
  deleteChild(
    lb: LoadBalancerRecord,
    locks: readonly Provisioned[],
    record: Provisioned,
    remove: () => void,
    along: readonly Provisioned[] = [],
  ): void {
    const changes = [...along.map((r) => deleting(r)), deleting(record, remove)];
    this.write(lb, locks, changes, 'octavia.child.delete');
  }

  begin(t: Transition): void {
    const now = octaviaTime();
    t.lb.provisioning_status = t.lbPending;
    if (t.lbPending !== 'PENDING_CREATE') t.lb.updated_at = now;
    for (const c of t.changes) {
      if (c.record === t.lb) continue;
      c.record.provisioning_status = c.pending;
      if (c.pending !== 'PENDING_CREATE') c.record.updated_at = now;
    }
    const epoch = ++t.lb._epoch;
    this.cloud.changed();
    if (t.stuck || INERT_PROVIDERS.has(t.lb.provider)) return;
    this.cloud.scheduler.schedule(this.cloud.timing.transition(t.key), () => this.settle(t, epoch));
  }

  private settle(t: Transition, epoch: number): void {
    const lb = t.lb;
    if (this.store.loadbalancers.get(lb.id) !== lb || lb._epoch !== epoch) return;
    if (this.cloud.faults.isStuck('octavia', 'loadbalancer', lb.id)) return;
    const now = octaviaTime();
    for (const c of t.changes) {
      if (c.record === lb) continue;
      if (c.final === 'DELETED') {
        c.remove?.();
        continue;
      }
      // A child pinned by a `stuck` fault keeps its PENDING_* while the load balancer settles.
      if (this.pinned(c.record)) continue;
      c.record.provisioning_status = c.final;
      c.record.updated_at = now;
    }
    if (t.lbFinal === 'DELETED') {
      this.store.removeLoadBalancer(lb);
      t.afterDelete?.();
    } else {
      lb.provisioning_status = t.lbFinal;
      lb.updated_at = now;
    }
    this.cloud.statuses.record('octavia', 'loadbalancer', lb.id, t.lbFinal);
    this.cloud.changed();
  }

  /** Whether a `stuck` fault names this child (listener, pool, member, health monitor, L7 policy or rule) by id. */
  private pinned(record: Provisioned): boolean {
    const kinds: readonly [string, { get(id: string): Provisioned | undefined }][] = [
      ['listener', this.store.listeners],
      ['pool', this.store.pools],
      ['healthmonitor', this.store.healthmonitors],
      ['l7policy', this.store.l7policies],
      ['l7rule', this.store.l7rules],
    ];
    // A member is known by its class: members are kept only in their pool's list (pool-members.ts).
    const kind =
      record instanceof StoredMember
        ? 'member'
        : kinds.find(([, records]) => records.get(record.id) === record)?.[0];
    return kind !== undefined && this.cloud.faults.isStuck('octavia', kind, record.id);
  }
}
