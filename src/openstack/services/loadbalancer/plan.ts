/**
 * The pure diff: desired load balancer vs what Octavia has below an ACTIVE load balancer → the
 * ordered writes that close the gap. No I/O, so every rule is unit-tested without a cloud.
 *
 * - Only fields the caller set are compared (undefined = not managed), so a cloud's defaults never
 *   cause a write: the steady state plans nothing.
 * - Deletions come first (they free ports and names), then each listener in turn: listener, pool,
 *   members, monitor.
 * - A step that creates an object whose id the following steps need (a listener before its pool)
 *   ends the plan for that listener: the engine applies one step per call anyway, because Octavia
 *   locks the load balancer (PENDING_UPDATE) after every write, and re-plans from a fresh read.
 * - Members: one batch update per pool when the set differs, however many members changed, so a
 *   burst of node changes costs one write when it is seen at once. Serial mode (providers that
 *   cannot take the batch) makes one member call per step instead.
 * - On a load balancer adopted under another name (a legacy name, or an id another controller
 *   recorded), the children that controller made keep their names and tags: what it made serves as
 *   it is, so a takeover writes nothing for them. What this identity creates there carries its own.
 */
import type { HealthMonitor } from '../../loadbalancer/v2/healthmonitors.ts';
import type { Listener } from '../../loadbalancer/v2/listeners.ts';
import type { Member, MemberCreateOpts } from '../../loadbalancer/v2/members.ts';
import type { Pool, SessionPersistence } from '../../loadbalancer/v2/pools.ts';
import {
  cidrsField,
  identityTags,
  listenerFields,
  memberBody,
  memberKey,
  monitorBody,
  poolFields,
  uniqueMembers,
} from './build.ts';
import type { ConfirmedMembers } from './confirmed-members.ts';
import { foreignTags } from './find.ts';
import type { CurrentState } from './read.ts';
import type {
  Action,
  DesiredHealthMonitor,
  DesiredListener,
  DesiredLoadBalancer,
  DesiredMember,
  DesiredPool,
} from './types.ts';

export type Step =
  | { op: 'updateLoadBalancer'; id: string; body: Record<string, unknown>; detail: string }
  | { op: 'createListener'; body: Record<string, unknown> & { protocol: string; protocol_port: number } }
  | { op: 'updateListener'; id: string; name: string; body: Record<string, unknown>; detail: string }
  | { op: 'deleteListener'; id: string; name: string }
  | { op: 'createPool'; body: Record<string, unknown> & { listener_id: string; name: string } }
  | { op: 'updatePool'; id: string; name: string; body: Record<string, unknown>; detail: string }
  | { op: 'deletePool'; id: string; name: string }
  | { op: 'replaceMembers'; poolId: string; poolName: string; members: MemberCreateOpts[]; detail: string }
  | { op: 'createMember'; poolId: string; body: MemberCreateOpts }
  | { op: 'updateMember'; poolId: string; id: string; body: Record<string, unknown>; detail: string }
  | { op: 'deleteMember'; poolId: string; id: string; name: string }
  | { op: 'createMonitor'; body: Record<string, unknown> & { pool_id: string; name: string } }
  | { op: 'updateMonitor'; id: string; name: string; body: Record<string, unknown>; detail: string }
  | { op: 'deleteMonitor'; id: string; name: string };

export interface PlanContext {
  /** The load balancer's name is this identity's (else it joined a shared one by id). */
  owned: boolean;
  /** Octavia API ≥ 2.5: tags are written and compared. */
  tags: boolean;
  /** provider-requires-serial-api-calls. */
  serial: boolean;
  /**
   * Owned, but under a name that is not the identity's (found by a legacy name or a recorded id):
   * existing children are not renamed or re-tagged.
   */
  adopted?: boolean | undefined;
  /** Pools whose members matched a desired set: the unread ones are planned from it, read ones recorded. */
  members?: ConfirmedMembers | undefined;
}

export type Plan = { kind: 'steps'; steps: Step[] } | { kind: 'conflict'; message: string };

export function planChanges(desired: DesiredLoadBalancer, state: CurrentState, ctx: PlanContext): Plan {
  const steps: Step[] = [];
  const tags = ctx.tags ? identityTags(desired.identity) : undefined;
  // Tags and names compared on existing children; new ones get `tags` and their names all the same.
  const keep = ctx.adopted ?? false;
  const childTags = keep ? undefined : tags;
  const key = (protocol: string, port: number) => `${protocol}:${port}`;

  for (const l of desired.listeners) {
    const taken = state.foreignListeners.find((f) => f.protocol === l.protocol && f.protocol_port === l.port);
    if (taken) {
      return {
        kind: 'conflict',
        message: `port ${l.protocol}/${l.port} of load balancer ${state.lb.id} is used by listener ${taken.name || taken.id} of another service`,
      };
    }
  }

  steps.push(...planLoadBalancer(desired, state, ctx, tags));

  // A child in ERROR cannot be repaired by an update: it is deleted and made again.
  const wanted = new Set(desired.listeners.map((l) => key(l.protocol, l.port)));
  const byKey = new Map<string, Listener>();
  for (const l of state.listeners) {
    const k = key(l.protocol, l.protocol_port);
    if (wanted.has(k) && l.provisioning_status !== 'ERROR' && !byKey.has(k)) byKey.set(k, l);
  }
  const kept = new Set([...byKey.values()].map((l) => l.id));
  const poolById = new Map(state.pools.map((p) => [p.id, p]));
  const keptPools = new Set<string>();
  for (const l of byKey.values()) {
    const pool = l.default_pool_id ? poolById.get(l.default_pool_id) : undefined;
    const d = desired.listeners.find((x) => key(x.protocol, x.port) === key(l.protocol, l.protocol_port));
    if (pool && d && pool.protocol === d.pool.protocol && pool.provisioning_status !== 'ERROR')
      keptPools.add(pool.id);
  }

  for (const l of state.listeners) {
    if (kept.has(l.id)) continue;
    const pool = l.default_pool_id ? poolById.get(l.default_pool_id) : undefined;
    if (pool && !keptPools.has(pool.id)) steps.push({ op: 'deletePool', id: pool.id, name: pool.name });
    steps.push({ op: 'deleteListener', id: l.id, name: l.name });
  }
  for (const p of state.pools) {
    const deletedAbove = steps.some((s) => s.op === 'deletePool' && s.id === p.id);
    if (!keptPools.has(p.id) && !deletedAbove) steps.push({ op: 'deletePool', id: p.id, name: p.name });
  }

  for (const d of desired.listeners) {
    const current = byKey.get(key(d.protocol, d.port));
    if (!current) {
      steps.push({
        op: 'createListener',
        body: {
          ...listenerFields(d),
          ...(tags ? { tags } : {}),
          loadbalancer_id: state.lb.id,
          protocol: d.protocol,
          protocol_port: d.port,
        },
      });
      continue;
    }
    const listenerChange = diffListener(d, current, childTags, { names: !keep });
    if (listenerChange)
      steps.push({ op: 'updateListener', id: current.id, name: current.name, ...listenerChange });

    const pool = current.default_pool_id ? poolById.get(current.default_pool_id) : undefined;
    if (!pool || !keptPools.has(pool.id)) {
      steps.push({
        op: 'createPool',
        body: {
          ...poolFields(d.pool),
          ...(tags ? { tags } : {}),
          name: d.pool.name,
          protocol: d.pool.protocol,
          lb_algorithm: d.pool.algorithm,
          listener_id: current.id,
        },
      });
      continue;
    }
    const poolChange = diffPool(d.pool, pool, childTags, { names: !keep });
    if (poolChange) steps.push({ op: 'updatePool', id: pool.id, name: pool.name, ...poolChange });
    steps.push(...planPoolMembers(d.pool.members, pool, state, ctx, { names: !keep }));
    steps.push(...planMonitor(d.pool, pool, state.monitors.get(pool.id), { names: !keep }));
  }
  return { kind: 'steps', steps };
}

/**
 * Removing an identity's part of a load balancer step by step (serial mode, or a shared load
 * balancer where only its own listeners go): pools first (their members and monitor go with them),
 * then listeners.
 */
export function planRemoval(state: CurrentState): Step[] {
  return [
    ...state.pools.map((p): Step => ({ op: 'deletePool', id: p.id, name: p.name })),
    ...state.listeners.map((l): Step => ({ op: 'deleteListener', id: l.id, name: l.name })),
  ];
}

function planLoadBalancer(
  desired: DesiredLoadBalancer,
  state: CurrentState,
  ctx: PlanContext,
  tags: string[] | undefined,
): Step[] {
  const { identity } = desired;
  const body: Record<string, unknown> = {};
  const changed: string[] = [];
  const current = state.lb.tags ?? [];
  // Under its own legacy name (the in-tree `a<uid>`), the name already says whose it is: no tag,
  // so a migration writes nothing to load balancers that serve as they are. Once another identity
  // shares it, the tag goes on, since sharers count who is served by tags.
  const namedOurs =
    (identity.legacyNames ?? []).includes(state.lb.name) && foreignTags(identity, current).length === 0;
  // Tags are only ever added: the other tags are the user's or other identities' (shared load balancers).
  if (tags && !namedOurs && !tags.every((t) => current.includes(t))) {
    body.tags = [...new Set([...current, ...tags])];
    changed.push('tags');
  }
  if (ctx.owned && identity.renameLegacy && state.lb.name !== identity.name) {
    body.name = identity.name;
    changed.push('name');
  }
  return changed.length > 0
    ? [{ op: 'updateLoadBalancer', id: state.lb.id, body, detail: changed.join(', ') }]
    : [];
}

interface Change {
  body: Record<string, unknown>;
  detail: string;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const sortedEntries = (r: Readonly<Record<string, string>> | null | undefined) =>
  Object.entries(r ?? {}).sort(([a], [b]) => a.localeCompare(b));

/** Tags the object lacks, merged with what it has; undefined when nothing is missing. */
function missingTags(want: string[] | undefined, have: readonly string[] | undefined): string[] | undefined {
  if (!want || want.every((t) => (have ?? []).includes(t))) return undefined;
  return [...new Set([...(have ?? []), ...want])];
}

function change(body: Record<string, unknown>): Change | undefined {
  const keys = Object.keys(body);
  return keys.length > 0 ? { body, detail: keys.join(', ') } : undefined;
}

const EVERY_SOURCE = new Set(['0.0.0.0/0', '::/0']);

/**
 * allowed_cidrs as a comparable set. Octavia lets every source in when the field is null, so a set
 * made only of "everything" (0.0.0.0/0, ::/0: what a Service without loadBalancerSourceRanges asks
 * for) is the same listener as null, which the in-tree provider and OCCM without VIP ACL leave:
 * adopting their listeners must not rewrite them.
 */
function sourceSet(v: unknown): string[] {
  const cidrs = cidrsField(v as string[] | null) ?? [];
  return cidrs.every((c) => EVERY_SOURCE.has(c)) ? [] : [...cidrs].sort();
}

/** Whether names are compared (false on an adopted load balancer: they stay as their maker wrote them). */
export interface NameRule {
  names: boolean;
}
const COMPARE_NAMES: NameRule = { names: true };

export function diffListener(
  d: DesiredListener,
  current: Listener,
  tags: string[] | undefined,
  rule: NameRule = COMPARE_NAMES,
): Change | undefined {
  const want = listenerFields(d);
  if (!rule.names) delete want.name;
  const body: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(want)) {
    const have = (current as unknown as Record<string, unknown>)[field];
    let same: boolean;
    if (field === 'allowed_cidrs') {
      same = sameJson(sourceSet(value), sourceSet(have));
    } else if (field === 'insert_headers') {
      same = sameJson(
        sortedEntries(value as Record<string, string>),
        sortedEntries(have as Record<string, string>),
      );
    } else if (field === 'default_tls_container_ref') {
      same = (value ?? null) === (have ?? null);
    } else {
      same = sameJson(value, have);
    }
    if (!same) body[field] = value;
  }
  const t = missingTags(tags, current.tags);
  if (t) body.tags = t;
  return change(body);
}

function samePersistence(a: SessionPersistence | null, b: SessionPersistence | null): boolean {
  if (!a || !b) return !a && !b;
  return a.type === b.type && (a.cookie_name ?? null) === (b.cookie_name ?? null);
}

export function diffPool(
  d: DesiredPool,
  current: Pool,
  tags: string[] | undefined,
  rule: NameRule = COMPARE_NAMES,
): Change | undefined {
  const body: Record<string, unknown> = {};
  if (rule.names && current.name !== d.name) body.name = d.name;
  if (current.lb_algorithm !== d.algorithm) body.lb_algorithm = d.algorithm;
  if (
    d.sessionPersistence !== undefined &&
    !samePersistence(d.sessionPersistence, current.session_persistence)
  )
    body.session_persistence = d.sessionPersistence;
  const t = missingTags(tags, current.tags);
  if (t) body.tags = t;
  return change(body);
}

/**
 * What differs between a desired member and Octavia's. The subnet is left out on purpose: Octavia
 * cannot change a member's subnet in place (the batch update ignores it), so comparing it would
 * plan the same update forever.
 */
export function memberDiff(
  d: DesiredMember,
  m: Member,
  rule: NameRule = COMPARE_NAMES,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (rule.names && d.name !== undefined && d.name !== m.name) body.name = d.name;
  if ((d.weight ?? 1) !== m.weight) body.weight = d.weight ?? 1;
  if ((d.monitorPort ?? null) !== (m.monitor_port ?? null)) body.monitor_port = d.monitorPort ?? null;
  if ((d.monitorAddress ?? null) !== (m.monitor_address ?? null))
    body.monitor_address = d.monitorAddress ?? null;
  if ((d.backup ?? false) !== m.backup) body.backup = d.backup ?? false;
  return body;
}

/**
 * A pool's member steps. Members not read (the pool unchanged since they matched a desired set) are
 * still that set: the same set again needs nothing, another one the batch update to it. Members read
 * and found as desired are recorded as such.
 */
function planPoolMembers(
  desired: readonly DesiredMember[],
  pool: Pool,
  state: CurrentState,
  ctx: PlanContext,
  rule: NameRule,
): Step[] {
  if (state.unread?.has(pool.id) && ctx.members && !ctx.serial) {
    if (ctx.members.matches(pool, desired, rule.names)) return [];
    const members = uniqueMembers(desired);
    return [
      {
        op: 'replaceMembers',
        poolId: pool.id,
        poolName: pool.name,
        members: members.map(memberBody),
        detail: `→ ${members.length} members`,
      },
    ];
  }
  const current = state.members.get(pool.id) ?? [];
  const steps = planMembers(desired, pool, current, ctx.serial, rule);
  if (steps.length === 0) ctx.members?.confirm(pool, current, desired, rule.names);
  return steps;
}

export function planMembers(
  desiredMembers: readonly DesiredMember[],
  pool: Pool,
  current: readonly Member[],
  serial: boolean,
  rule: NameRule = COMPARE_NAMES,
): Step[] {
  const desired = uniqueMembers(desiredMembers);
  const have = new Map(current.map((m) => [memberKey(m.address, m.protocol_port), m]));
  const want = new Set(desired.map((m) => memberKey(m.address, m.port)));
  const extra = current.filter((m) => !want.has(memberKey(m.address, m.protocol_port)));
  const missing = desired.filter((m) => !have.has(memberKey(m.address, m.port)));
  const changed = desired.flatMap((d) => {
    const m = have.get(memberKey(d.address, d.port));
    const diff = m ? memberDiff(d, m, rule) : {};
    return m && Object.keys(diff).length > 0 ? [{ d, m, diff }] : [];
  });
  if (extra.length + missing.length + changed.length === 0) return [];
  if (!serial) {
    const detail = `+${missing.length} -${extra.length} ~${changed.length} → ${desired.length} members`;
    return [
      {
        op: 'replaceMembers',
        poolId: pool.id,
        poolName: pool.name,
        members: desired.map(memberBody),
        detail,
      },
    ];
  }
  return [
    ...extra.map((m): Step => ({ op: 'deleteMember', poolId: pool.id, id: m.id, name: m.name })),
    ...missing.map((d): Step => ({ op: 'createMember', poolId: pool.id, body: memberBody(d) })),
    ...changed.map(({ m, diff }): Step => ({
      op: 'updateMember',
      poolId: pool.id,
      id: m.id,
      body: diff,
      detail: Object.keys(diff).join(', '),
    })),
  ];
}

export function planMonitor(
  d: DesiredPool,
  pool: Pool,
  current: HealthMonitor | undefined,
  rule: NameRule = COMPARE_NAMES,
): Step[] {
  const want = d.healthMonitor;
  if (!want) return current ? [{ op: 'deleteMonitor', id: current.id, name: current.name }] : [];
  // A monitor's type cannot change in place; one in ERROR cannot be repaired.
  if (current && (current.type !== want.type || current.provisioning_status === 'ERROR'))
    return [{ op: 'deleteMonitor', id: current.id, name: current.name }];
  if (!current)
    return [{ op: 'createMonitor', body: { ...monitorBody(want), pool_id: pool.id, name: want.name } }];
  const diff = diffMonitor(want, current, rule);
  return diff ? [{ op: 'updateMonitor', id: current.id, name: current.name, ...diff }] : [];
}

export function diffMonitor(
  want: DesiredHealthMonitor,
  current: HealthMonitor,
  rule: NameRule = COMPARE_NAMES,
): Change | undefined {
  const { type: _type, ...fields } = monitorBody(want);
  const body: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(fields)) {
    if (value === undefined || (field === 'name' && !rule.names)) continue;
    if (!sameJson(value, (current as unknown as Record<string, unknown>)[field])) body[field] = value;
  }
  return change(body);
}

/** The Action a step records once applied. */
export function actionOf(step: Step, id?: string): Action {
  switch (step.op) {
    case 'updateLoadBalancer':
      return { verb: 'update', resource: 'loadbalancer', id: step.id, detail: step.detail };
    case 'createListener':
      return {
        verb: 'create',
        resource: 'listener',
        id,
        name: step.body.name as string,
        detail: `${step.body.protocol}/${step.body.protocol_port}`,
      };
    case 'updateListener':
      return { verb: 'update', resource: 'listener', id: step.id, name: step.name, detail: step.detail };
    case 'deleteListener':
      return { verb: 'delete', resource: 'listener', id: step.id, name: step.name };
    case 'createPool':
      return { verb: 'create', resource: 'pool', id, name: step.body.name };
    case 'updatePool':
      return { verb: 'update', resource: 'pool', id: step.id, name: step.name, detail: step.detail };
    case 'deletePool':
      return { verb: 'delete', resource: 'pool', id: step.id, name: step.name };
    case 'replaceMembers':
      return {
        verb: 'replace',
        resource: 'members',
        id: step.poolId,
        name: step.poolName,
        detail: step.detail,
      };
    case 'createMember':
      return {
        verb: 'create',
        resource: 'member',
        id,
        name: step.body.name,
        detail: `${step.body.address}:${step.body.protocol_port}`,
      };
    case 'updateMember':
      return { verb: 'update', resource: 'member', id: step.id, detail: step.detail };
    case 'deleteMember':
      return { verb: 'delete', resource: 'member', id: step.id, name: step.name };
    case 'createMonitor':
      return { verb: 'create', resource: 'healthmonitor', id, name: step.body.name };
    case 'updateMonitor':
      return { verb: 'update', resource: 'healthmonitor', id: step.id, name: step.name, detail: step.detail };
    case 'deleteMonitor':
      return { verb: 'delete', resource: 'healthmonitor', id: step.id, name: step.name };
  }
}
