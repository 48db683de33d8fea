/**
 * operating_status as a production health manager reports it, derived from the tree instead of
 * stored: members of a monitored pool are ONLINE (or ERROR when marked down through the admin
 * API), unmonitored ones NO_MONITOR; a pool with some members down is DEGRADED, with all of them
 * down ERROR, and the load balancer follows its worst pool. Disabled objects are OFFLINE, and so is
 * anything not deployed yet (PENDING_CREATE) or whose create failed.
 */
import type {
  HealthMonitorRecord,
  ListenerRecord,
  LoadBalancerRecord,
  MemberRecord,
  OperatingStatus,
  PoolRecord,
  Provisioned,
} from './model.ts';
import type { OctaviaStore } from './store.ts';

function undeployed(r: Provisioned): boolean {
  return r.provisioning_status === 'PENDING_CREATE' || r.provisioning_status === 'ERROR';
}

export class OperatingStatuses {
  private readonly store: OctaviaStore;

  constructor(store: OctaviaStore) {
    this.store = store;
  }

  healthmonitor(hm: HealthMonitorRecord): OperatingStatus {
    if (hm._forced_operating_status) return hm._forced_operating_status;
    if (!hm.admin_state_up || undeployed(hm)) return 'OFFLINE';
    return 'ONLINE';
  }

  member(member: MemberRecord, pool?: PoolRecord): OperatingStatus {
    if (member._forced_operating_status) return member._forced_operating_status;
    const p = pool ?? this.store.pools.get(member.pool_id);
    const hm = p ? this.store.healthmonitorOf(p) : undefined;
    const monitored = hm !== undefined && hm.admin_state_up && !undeployed(hm);
    if (member.provisioning_status === 'PENDING_CREATE') return hm ? 'OFFLINE' : 'NO_MONITOR';
    if (!member.admin_state_up || member.provisioning_status === 'ERROR') return 'OFFLINE';
    return monitored ? 'ONLINE' : 'NO_MONITOR';
  }

  pool(pool: PoolRecord): OperatingStatus {
    if (pool._forced_operating_status) return pool._forced_operating_status;
    if (!pool.admin_state_up || undeployed(pool)) return 'OFFLINE';
    // A pool no listener sends traffic to is not in the amphora's configuration at all.
    if (this.store.listenersOfPool(pool).length === 0) return 'OFFLINE';
    // Only a member forced down (the admin API) is ERROR: without one the pool is ONLINE, whatever
    // the others are, and its thousands of members need not be looked at.
    if (!this.store.hasForcedMember(pool)) return 'ONLINE';
    let working = 0;
    let down = 0;
    for (const m of this.store.membersOf(pool)) {
      if (!m.admin_state_up) continue;
      const s = this.member(m, pool);
      if (s === 'ERROR') down++;
      else if (s === 'ONLINE' || s === 'NO_MONITOR' || s === 'DRAINING') working++;
    }
    if (down > 0 && working === 0) return 'ERROR';
    if (down > 0) return 'DEGRADED';
    return 'ONLINE';
  }

  listener(listener: ListenerRecord): OperatingStatus {
    if (listener._forced_operating_status) return listener._forced_operating_status;
    if (!listener.admin_state_up || undeployed(listener)) return 'OFFLINE';
    return 'ONLINE';
  }

  loadbalancer(lb: LoadBalancerRecord): OperatingStatus {
    if (lb._forced_operating_status) return lb._forced_operating_status;
    if (!lb.admin_state_up || undeployed(lb)) return 'OFFLINE';
    let worst: OperatingStatus = 'ONLINE';
    for (const pid of lb.pool_ids) {
      const pool = this.store.pools.get(pid);
      if (!pool) continue;
      const s = this.pool(pool);
      if (s === 'ERROR') return 'ERROR';
      if (s === 'DEGRADED') worst = 'DEGRADED';
    }
    for (const lid of lb.listener_ids) {
      const listener = this.store.listeners.get(lid);
      if (
        listener &&
        (listener._forced_operating_status === 'ERROR' || listener._forced_operating_status === 'DEGRADED')
      ) {
        worst = 'DEGRADED';
      }
    }
    return worst;
  }

  /** GET /loadbalancers/{id}/status: the tree of listeners, their pools, monitors and members. */
  tree(lb: LoadBalancerRecord): unknown {
    const listeners = lb.listener_ids.flatMap((lid) => this.store.listeners.get(lid) ?? []);
    return {
      statuses: {
        loadbalancer: {
          id: lb.id,
          name: lb.name,
          operating_status: this.loadbalancer(lb),
          provisioning_status: lb.provisioning_status,
          listeners: listeners.map((l) => ({
            id: l.id,
            name: l.name,
            operating_status: this.listener(l),
            provisioning_status: l.provisioning_status,
            pools: this.store.poolsOfListener(l).map((p) => this.poolStatus(p)),
          })),
        },
      },
    };
  }

  private poolStatus(pool: PoolRecord): Record<string, unknown> {
    const out: Record<string, unknown> = {
      id: pool.id,
      name: pool.name,
      provisioning_status: pool.provisioning_status,
      operating_status: this.pool(pool),
    };
    const hm = this.store.healthmonitorOf(pool);
    if (hm) {
      out.health_monitor = {
        id: hm.id,
        name: hm.name,
        type: hm.type,
        provisioning_status: hm.provisioning_status,
        operating_status: this.healthmonitor(hm),
      };
    }
    out.members = this.store.membersOf(pool).map((m) => ({
      id: m.id,
      name: m.name,
      operating_status: this.member(m, pool),
      provisioning_status: m.provisioning_status,
      address: m.address,
      protocol_port: m.protocol_port,
    }));
    return out;
  }
}
