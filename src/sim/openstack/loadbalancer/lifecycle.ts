/**
 * Octavia's provisioning state machine. A write locks the load balancer (ACTIVE → PENDING_*),
 * marks the touched objects PENDING_CREATE/UPDATE/DELETE, and the controller worker settles them
 * later; meanwhile every other write on the tree is refused with 409.
 */
import type { EmulatedCloud } from '../core/cloud.ts';
import type { TransitionKey } from '../core/timing.ts';
import { immutable, lbPendingState } from './errors.ts';
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

  /** A parent pool outside ACTIVE blocks its members and health monitor. */
  assertPoolWritable(pool: Provisioned): void {
    if (pool.provisioning_status !== 'ACTIVE') throw immutable('Pool', pool.id);
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
    this.cloud.changed();
  }
}
