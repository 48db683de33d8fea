/**
 * Every Octavia object of the emulated cloud, with the parent/child links kept consistent on
 * create and delete. Persisted whole through the state file.
 */
import type { Persistent } from '../core/types.ts';
import { Collection } from './collection.ts';
import { notFound } from './errors.ts';
import type { FlavorProfileRecord, FlavorRecord } from './flavors.ts';
import { StoredMember } from './member-record.ts';
import type {
  HealthMonitorRecord,
  L7PolicyRecord,
  L7RuleRecord,
  ListenerRecord,
  LoadBalancerRecord,
  MemberRecord,
  PoolRecord,
  Provisioned,
} from './model.ts';
import { PoolMembers } from './pool-members.ts';

interface Snapshot {
  loadbalancers: LoadBalancerRecord[];
  listeners: ListenerRecord[];
  pools: PoolRecord[];
  members: MemberRecord[];
  healthmonitors: HealthMonitorRecord[];
  l7policies: L7PolicyRecord[];
  l7rules: L7RuleRecord[];
  flavorprofiles: FlavorProfileRecord[];
  flavors: FlavorRecord[];
}

export class OctaviaStore implements Persistent {
  readonly loadbalancers = new Collection<LoadBalancerRecord>();
  readonly listeners = new Collection<ListenerRecord>();
  readonly pools = new Collection<PoolRecord>();
  readonly healthmonitors = new Collection<HealthMonitorRecord>();
  readonly l7policies = new Collection<L7PolicyRecord>();
  readonly l7rules = new Collection<L7RuleRecord>();
  readonly flavorprofiles = new Collection<FlavorProfileRecord>();
  readonly flavors = new Collection<FlavorRecord>();
  /**
   * Each pool's members in creation order (the order Octavia lists them in), and nowhere else: see
   * pool-members.ts. A pool of a large cluster holds thousands, and its list, status and batch
   * update read them all, so they are neither looked up one id at a time nor re-sorted per request.
   */
  private readonly poolMembers = new Map<string, PoolMembers>();
  /**
   * Members whose operating status the admin API forced: only those can make a pool DEGRADED or
   * ERROR, so a pool without one is not walked member by member to print its status.
   */
  private readonly forced = new Set<MemberRecord>();

  loadbalancer(id: string): LoadBalancerRecord {
    return this.loadbalancers.get(id) ?? fail('Load Balancer', id);
  }

  listener(id: string): ListenerRecord {
    return this.listeners.get(id) ?? fail('Listener', id);
  }

  pool(id: string): PoolRecord {
    return this.pools.get(id) ?? fail('Pool', id);
  }

  healthmonitor(id: string): HealthMonitorRecord {
    return this.healthmonitors.get(id) ?? fail('Health Monitor', id);
  }

  l7policy(id: string): L7PolicyRecord {
    return this.l7policies.get(id) ?? fail('L7 Policy', id);
  }

  l7rule(id: string): L7RuleRecord {
    return this.l7rules.get(id) ?? fail('L7 Rule', id);
  }

  /** A member of `pool`: one of another pool is as missing as an unknown id. */
  memberIn(pool: PoolRecord, id: string): MemberRecord {
    return this.poolMembers.get(pool.id)?.get(id) ?? fail('Member', id);
  }

  /**
   * A member of any pool, `pool`'s first: for the admin API and a list's marker, which may name a
   * member of another pool. Walks the pools: members are kept nowhere else.
   */
  findMember(id: string, pool?: PoolRecord): MemberRecord | undefined {
    const first = pool && this.poolMembers.get(pool.id)?.get(id);
    if (first) return first;
    for (const members of this.poolMembers.values()) {
      const m = members.get(id);
      if (m) return m;
    }
    return undefined;
  }

  ruleIn(policy: L7PolicyRecord, id: string): L7RuleRecord {
    const r = this.l7rules.get(id);
    if (!r || r.l7policy_id !== policy.id) throw notFound('L7 Rule', id);
    return r;
  }

  lbOfPool(pool: PoolRecord): LoadBalancerRecord {
    return this.loadbalancer(pool.loadbalancer_id);
  }

  lbOfListener(listener: ListenerRecord): LoadBalancerRecord {
    return this.loadbalancer(listener.loadbalancer_id);
  }

  /**
   * Listeners that send traffic to the pool: as default pool, or through an enabled L7 redirect
   * policy that has rules (Octavia's Pool.listeners property).
   */
  listenersOfPool(pool: PoolRecord): ListenerRecord[] {
    const ids = new Set(pool.listener_ids);
    for (const policy of this.policiesRedirectingTo(pool)) {
      if (policy.admin_state_up && policy.rule_ids.length > 0) ids.add(policy.listener_id);
    }
    return [...ids].flatMap((id) => this.listeners.get(id) ?? []);
  }

  policiesRedirectingTo(pool: PoolRecord): L7PolicyRecord[] {
    const lb = this.loadbalancers.get(pool.loadbalancer_id);
    if (!lb) return [];
    const out: L7PolicyRecord[] = [];
    for (const lid of lb.listener_ids) {
      const listener = this.listeners.get(lid);
      for (const pid of listener?.l7policy_ids ?? []) {
        const policy = this.l7policies.get(pid);
        if (policy?.redirect_pool_id === pool.id) out.push(policy);
      }
    }
    return out;
  }

  /** Pools a listener reaches: its default pool first, then L7 redirect pools. */
  poolsOfListener(listener: ListenerRecord): PoolRecord[] {
    const ids: string[] = [];
    if (listener.default_pool_id) ids.push(listener.default_pool_id);
    for (const pid of listener.l7policy_ids) {
      const redirect = this.l7policies.get(pid)?.redirect_pool_id;
      if (redirect && !ids.includes(redirect)) ids.push(redirect);
    }
    return ids.flatMap((id) => this.pools.get(id) ?? []);
  }

  /** The pool's members in (created_at, id) order; the array is shared, do not mutate it. */
  membersOf(pool: PoolRecord): readonly MemberRecord[] {
    return this.poolMembers.get(pool.id)?.ordered() ?? [];
  }

  memberCount(pool: PoolRecord): number {
    return this.poolMembers.get(pool.id)?.size ?? 0;
  }

  /** Records a member's forced operating status being set or cleared (the admin API). */
  forcedChanged(member: MemberRecord): void {
    if (member._forced_operating_status) this.forced.add(member);
    else this.forced.delete(member);
  }

  /** Whether a member of the pool has a forced operating status. */
  hasForcedMember(pool: PoolRecord): boolean {
    // Removing a member (or its pool) drops it from `forced`: those left are in the store.
    for (const m of this.forced) if (m.pool_id === pool.id) return true;
    return false;
  }

  healthmonitorOf(pool: PoolRecord): HealthMonitorRecord | undefined {
    return pool.healthmonitor_id ? this.healthmonitors.get(pool.healthmonitor_id) : undefined;
  }

  /** Every object of a load balancer, the load balancer included (for cascade delete and status changes). */
  tree(lb: LoadBalancerRecord): Provisioned[] {
    const out: Provisioned[] = [lb];
    for (const lid of lb.listener_ids) {
      const listener = this.listeners.get(lid);
      if (!listener) continue;
      out.push(listener);
      for (const pid of listener.l7policy_ids) {
        const policy = this.l7policies.get(pid);
        if (!policy) continue;
        out.push(policy);
        for (const rid of policy.rule_ids) {
          const rule = this.l7rules.get(rid);
          if (rule) out.push(rule);
        }
      }
    }
    for (const pid of lb.pool_ids) {
      const pool = this.pools.get(pid);
      if (!pool) continue;
      out.push(pool);
      const hm = this.healthmonitorOf(pool);
      if (hm) out.push(hm);
      out.push(...this.membersOf(pool));
    }
    return out;
  }

  addLoadBalancer(lb: LoadBalancerRecord): void {
    this.loadbalancers.add(lb);
  }

  addListener(listener: ListenerRecord): void {
    this.listeners.add(listener);
    this.loadbalancer(listener.loadbalancer_id).listener_ids.push(listener.id);
    if (listener.default_pool_id) this.pools.get(listener.default_pool_id)?.listener_ids.push(listener.id);
  }

  addPool(pool: PoolRecord): void {
    this.pools.add(pool);
    this.loadbalancer(pool.loadbalancer_id).pool_ids.push(pool.id);
  }

  addMember(member: MemberRecord): void {
    const pool = this.pool(member.pool_id);
    let members = this.poolMembers.get(pool.id);
    if (!members) this.poolMembers.set(pool.id, (members = new PoolMembers()));
    members.add(member);
    if (member._forced_operating_status) this.forced.add(member);
  }

  addHealthMonitor(hm: HealthMonitorRecord): void {
    this.healthmonitors.add(hm);
    this.pool(hm.pool_id).healthmonitor_id = hm.id;
  }

  addL7Policy(policy: L7PolicyRecord): void {
    this.l7policies.add(policy);
    const listener = this.listener(policy.listener_id);
    listener.l7policy_ids.push(policy.id);
    this.renumberPolicies(listener, policy);
  }

  addL7Rule(rule: L7RuleRecord): void {
    this.l7rules.add(rule);
    this.l7policy(rule.l7policy_id).rule_ids.push(rule.id);
  }

  /** Sets a listener's default pool, keeping the pool's back-references right. */
  setDefaultPool(listener: ListenerRecord, poolId: string | null): void {
    if (listener.default_pool_id) {
      const old = this.pools.get(listener.default_pool_id);
      if (old) old.listener_ids = old.listener_ids.filter((id) => id !== listener.id);
    }
    listener.default_pool_id = poolId;
    if (poolId) this.pools.get(poolId)?.listener_ids.push(listener.id);
  }

  /**
   * Octavia keeps L7 policy positions a dense 1..n sequence: an inserted policy pushes the
   * others down, a position past the end appends.
   */
  renumberPolicies(listener: ListenerRecord, moved?: L7PolicyRecord): void {
    const others = listener.l7policy_ids
      .filter((id) => id !== moved?.id)
      .flatMap((id) => this.l7policies.get(id) ?? [])
      .sort((a, b) => a.position - b.position);
    if (moved) {
      const at = Math.max(0, Math.min(others.length, moved.position - 1));
      others.splice(at, 0, moved);
    }
    others.forEach((p, i) => (p.position = i + 1));
    listener.l7policy_ids = others.map((p) => p.id);
  }

  removeL7Rule(rule: L7RuleRecord): void {
    this.l7rules.delete(rule.id);
    const policy = this.l7policies.get(rule.l7policy_id);
    if (policy) policy.rule_ids = policy.rule_ids.filter((id) => id !== rule.id);
  }

  removeL7Policy(policy: L7PolicyRecord): void {
    for (const rid of policy.rule_ids) this.l7rules.delete(rid);
    this.l7policies.delete(policy.id);
    const listener = this.listeners.get(policy.listener_id);
    if (listener) {
      listener.l7policy_ids = listener.l7policy_ids.filter((id) => id !== policy.id);
      this.renumberPolicies(listener);
    }
  }

  removeMember(member: MemberRecord): void {
    this.poolMembers.get(member.pool_id)?.remove(member);
    this.forced.delete(member);
  }

  removeHealthMonitor(hm: HealthMonitorRecord): void {
    this.healthmonitors.delete(hm.id);
    const pool = this.pools.get(hm.pool_id);
    if (pool?.healthmonitor_id === hm.id) pool.healthmonitor_id = null;
  }

  removeListener(listener: ListenerRecord): void {
    for (const pid of [...listener.l7policy_ids]) {
      const policy = this.l7policies.get(pid);
      if (policy) this.removeL7Policy(policy);
    }
    this.setDefaultPool(listener, null);
    this.listeners.delete(listener.id);
    const lb = this.loadbalancers.get(listener.loadbalancer_id);
    if (lb) lb.listener_ids = lb.listener_ids.filter((id) => id !== listener.id);
  }

  removePool(pool: PoolRecord): void {
    for (const member of this.forced) if (member.pool_id === pool.id) this.forced.delete(member);
    this.poolMembers.delete(pool.id);
    const hm = this.healthmonitorOf(pool);
    if (hm) this.healthmonitors.delete(hm.id);
    for (const lid of pool.listener_ids) {
      const listener = this.listeners.get(lid);
      if (listener?.default_pool_id === pool.id) listener.default_pool_id = null;
    }
    this.pools.delete(pool.id);
    const lb = this.loadbalancers.get(pool.loadbalancer_id);
    if (lb) lb.pool_ids = lb.pool_ids.filter((id) => id !== pool.id);
  }

  removeLoadBalancer(lb: LoadBalancerRecord): void {
    for (const lid of [...lb.listener_ids]) {
      const listener = this.listeners.get(lid);
      if (listener) this.removeListener(listener);
    }
    for (const pid of [...lb.pool_ids]) {
      const pool = this.pools.get(pid);
      if (pool) this.removePool(pool);
    }
    this.loadbalancers.delete(lb.id);
  }

  snapshot(): Snapshot {
    return {
      loadbalancers: [...this.loadbalancers.ordered()],
      listeners: [...this.listeners.ordered()],
      pools: [...this.pools.ordered()],
      members: [...this.poolMembers.values()].flatMap((m) => m.ordered().map(plainMember)),
      healthmonitors: [...this.healthmonitors.ordered()],
      l7policies: [...this.l7policies.ordered()],
      l7rules: [...this.l7rules.ordered()],
      flavorprofiles: [...this.flavorprofiles.ordered()],
      flavors: [...this.flavors.ordered()],
    };
  }

  restore(data: unknown): void {
    const snap = data as Partial<Snapshot>;
    const load = <T extends { id: string; created_at: string }>(c: Collection<T>, items: T[] | undefined) => {
      c.clear();
      for (const item of items ?? []) c.add(structuredClone(item));
    };
    load(this.loadbalancers, snap.loadbalancers);
    load(this.listeners, snap.listeners);
    load(this.pools, snap.pools);
    this.poolMembers.clear();
    this.forced.clear();
    // A member knows its pool: the pools' member lists are rebuilt from the members.
    for (const m of snap.members ?? []) {
      const pool = this.pools.get(m.pool_id);
      if (pool) this.addMember(new StoredMember(pool, m));
    }
    load(this.healthmonitors, snap.healthmonitors);
    load(this.l7policies, snap.l7policies);
    load(this.l7rules, snap.l7rules);
    load(this.flavorprofiles, snap.flavorprofiles);
    load(this.flavors, snap.flavors);
  }
}

/** A member as the state file holds it (a StoredMember gives its own; any other is one already). */
const plainMember = (m: MemberRecord): MemberRecord => (m instanceof StoredMember ? m.toJSON() : m);

function fail(resource: string, id: string): never {
  throw notFound(resource, id);
}
