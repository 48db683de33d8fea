/** The pure parts: the diff (plan.ts), ownership, the create body and the backoff hint. No cloud. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HealthMonitor } from '../../loadbalancer/v2/healthmonitors.ts';
import type { Listener } from '../../loadbalancer/v2/listeners.ts';
import type { LoadBalancer } from '../../loadbalancer/v2/loadbalancers.ts';
import type { Member } from '../../loadbalancer/v2/members.ts';
import type { Pool } from '../../loadbalancer/v2/pools.ts';
import { afterWrite, AMPHORA_PHASES, backoffPolicy, pendingHint } from './backoff.ts';
import { createBody } from './build.ts';
import { ownership } from './ownership.ts';
import { planChanges, planMembers, type PlanContext } from './plan.ts';
import type { CurrentState } from './read.ts';
import type { DesiredLoadBalancer, DesiredMember } from './types.ts';

const NAME = 'kube_service_c_ns_svc';
const ctx: PlanContext = { owned: true, tags: true, serial: false };

const member = (i: number): DesiredMember => ({
  name: `node-${i}`,
  address: `10.0.0.${i}`,
  port: 30080,
  subnetId: 's1',
});

function desired(over: Partial<DesiredLoadBalancer> = {}): DesiredLoadBalancer {
  return {
    identity: { name: NAME, description: 'd', sharedTagPrefix: 'kube_service_' },
    vip: { subnetId: 's1' },
    listeners: [
      {
        name: `listener_0_${NAME}`,
        protocol: 'TCP',
        port: 80,
        connectionLimit: -1,
        pool: {
          name: `pool_0_${NAME}`,
          protocol: 'TCP',
          algorithm: 'ROUND_ROBIN',
          members: [member(1), member(2)],
          healthMonitor: { name: `monitor_0_${NAME}`, type: 'TCP', delay: 5, timeout: 3, maxRetries: 1 },
        },
      },
    ],
    ...over,
  };
}

/** Octavia's view of `desired` after a create, with the defaults Octavia fills in. */
function current(): CurrentState {
  const lb = {
    id: 'lb',
    name: NAME,
    tags: [NAME],
    provisioning_status: 'ACTIVE',
    vip_address: '10.0.0.100',
  } as LoadBalancer;
  const listener = {
    id: 'l0',
    name: `listener_0_${NAME}`,
    protocol: 'TCP',
    protocol_port: 80,
    connection_limit: -1,
    default_pool_id: 'p0',
    insert_headers: {},
    allowed_cidrs: null,
    timeout_client_data: 50_000,
    tags: [NAME],
    provisioning_status: 'ACTIVE',
  } as unknown as Listener;
  const pool = {
    id: 'p0',
    name: `pool_0_${NAME}`,
    protocol: 'TCP',
    lb_algorithm: 'ROUND_ROBIN',
    session_persistence: null,
    listeners: [{ id: 'l0' }],
    healthmonitor_id: 'h0',
    tags: [NAME],
    provisioning_status: 'ACTIVE',
  } as unknown as Pool;
  const members = [1, 2].map(
    (i) =>
      ({
        id: `m${i}`,
        name: `node-${i}`,
        address: `10.0.0.${i}`,
        protocol_port: 30080,
        weight: 1,
        backup: false,
        subnet_id: 's1',
        monitor_port: null,
        monitor_address: null,
      }) as Member,
  );
  const hm = {
    id: 'h0',
    name: `monitor_0_${NAME}`,
    type: 'TCP',
    delay: 5,
    timeout: 3,
    max_retries: 1,
    max_retries_down: 3,
    http_method: null,
    url_path: null,
    expected_codes: null,
    provisioning_status: 'ACTIVE',
  } as unknown as HealthMonitor;
  return {
    lb,
    listeners: [listener],
    foreignListeners: [],
    pools: [pool],
    members: new Map([['p0', members]]),
    monitors: new Map([['p0', hm]]),
  };
}

const ops = (d: DesiredLoadBalancer, s: CurrentState, c = ctx) => {
  const plan = planChanges(d, s, c);
  assert.equal(plan.kind, 'steps');
  return plan.kind === 'steps' ? plan.steps.map((x) => x.op) : [];
};

describe('planChanges', () => {
  it('plans nothing in the steady state, whatever defaults Octavia filled in', () => {
    assert.deepEqual(ops(desired(), current()), []);
  });

  it('adopts a load balancer under its own legacy name without writing the ownership tag, unless others share it', () => {
    // The in-tree provider's a<uid> names the Service it serves: a tag would only repeat that, at
    // the price of a write (and a PENDING_UPDATE) per load balancer on every migration.
    const legacy = 'a0123456789abcdef0123456789abcde';
    const d = desired({ identity: { ...desired().identity, legacyNames: [legacy] } });
    const untagged = (tags: string[]) => {
      const s = current();
      s.lb = { ...s.lb, name: legacy, tags };
      return s;
    };
    const adopted = { ...ctx, adopted: true };
    assert.deepEqual(
      ops(d, untagged([]), adopted).filter((o) => o === 'updateLoadBalancer'),
      [],
    );
    // Shared: the other identity counts who serves it by tags, so the owner says it is one of them.
    assert.deepEqual(
      ops(d, untagged(['kube_service_c_ns_other']), adopted).filter((o) => o === 'updateLoadBalancer'),
      ['updateLoadBalancer'],
    );
    // Any other name found by a recorded id still gets the tag.
    const s = current();
    s.lb = { ...s.lb, name: 'made-by-hand', tags: [] };
    assert.deepEqual(
      ops(d, s, adopted).filter((o) => o === 'updateLoadBalancer'),
      ['updateLoadBalancer'],
    );
  });

  it('leaves fields the caller does not manage alone', () => {
    const s = current();
    s.listeners[0]!.connection_limit = 5000;
    s.listeners[0]!.timeout_client_data = 1;
    const d = desired();
    const { connectionLimit: _c, ...listener } = d.listeners[0]!;
    assert.deepEqual(ops({ ...d, listeners: [listener] }, s), []);
    assert.deepEqual(ops(d, s), ['updateListener']);
  });

  it('takes [] and null allowed_cidrs as the same, and compares CIDR sets unordered', () => {
    const d = desired();
    const l = d.listeners[0]!;
    assert.deepEqual(ops({ ...d, listeners: [{ ...l, allowedCidrs: [] }] }, current()), []);
    const s = current();
    s.listeners[0]!.allowed_cidrs = ['10.0.0.0/8', '192.168.0.0/16'];
    assert.deepEqual(
      ops({ ...d, listeners: [{ ...l, allowedCidrs: ['192.168.0.0/16', '10.0.0.0/8'] }] }, s),
      [],
    );
  });

  it('takes "every source" as null: a listener another controller left without allowed_cidrs is not rewritten', () => {
    // The in-tree provider and OCCM without VIP ACL leave null; a Service without
    // loadBalancerSourceRanges asks for 0.0.0.0/0 (or ::/0): the same listener to Octavia.
    const d = desired();
    const l = d.listeners[0]!;
    for (const every of [['0.0.0.0/0'], ['::/0'], ['0.0.0.0/0', '::/0']]) {
      assert.deepEqual(
        ops({ ...d, listeners: [{ ...l, allowedCidrs: every }] }, current()),
        [],
        every.join(),
      );
      const s = current();
      s.listeners[0]!.allowed_cidrs = every;
      assert.deepEqual(ops({ ...d, listeners: [{ ...l, allowedCidrs: null }] }, s), [], every.join());
    }
    assert.deepEqual(
      ops({ ...d, listeners: [{ ...l, allowedCidrs: ['0.0.0.0/0', '10.0.0.0/8'] }] }, current()),
      ['updateListener'],
    );
  });

  it('replaces a pool whose protocol changed, and a monitor whose type changed', () => {
    const d = desired();
    const l = d.listeners[0]!;
    assert.deepEqual(
      ops({ ...d, listeners: [{ ...l, pool: { ...l.pool, protocol: 'PROXY' } }] }, current()),
      ['deletePool', 'createPool'],
    );
    const hm = { ...l.pool.healthMonitor!, type: 'HTTP' as const, urlPath: '/healthz' };
    assert.deepEqual(
      ops({ ...d, listeners: [{ ...l, pool: { ...l.pool, healthMonitor: hm } }] }, current()),
      ['deleteMonitor'],
    );
  });

  it('deletes the pool then the listener of a port no longer wanted', () => {
    const d = desired({ listeners: [] });
    assert.deepEqual(ops(d, current()), ['deletePool', 'deleteListener']);
  });

  it('refuses a port another identity already listens on', () => {
    const s = current();
    const theirs = {
      ...s.listeners[0]!,
      id: 'x',
      name: 'listener_0_kube_service_c_ns_other',
      tags: ['kube_service_c_ns_other'],
    };
    s.foreignListeners.push(theirs);
    const plan = planChanges(desired(), s, ctx);
    assert.equal(plan.kind, 'conflict');
  });

  it('adds missing tags without removing anyone else’s', () => {
    const s = current();
    s.lb.tags = ['user-tag'];
    const plan = planChanges(desired(), s, ctx);
    assert.ok(plan.kind === 'steps');
    assert.deepEqual(plan.steps[0], {
      op: 'updateLoadBalancer',
      id: 'lb',
      body: { tags: ['user-tag', NAME] },
      detail: 'tags',
    });
  });
});

describe('planMembers', () => {
  const pool = { id: 'p0', name: 'pool' } as Pool;
  const have = current().members.get('p0')!;

  it('is one batch update for any number of changes, none when equal', () => {
    assert.deepEqual(planMembers([member(1), member(2)], pool, have, false), []);
    const steps = planMembers(
      [member(2), member(3), member(4), { ...member(1), weight: 3 }],
      pool,
      have,
      false,
    );
    assert.equal(steps.length, 1);
    assert.equal(steps[0]!.op, 'replaceMembers');
    assert.equal(steps[0]!.op === 'replaceMembers' && steps[0]!.members.length, 4);
  });

  it('ignores the member subnet, which Octavia cannot change in place', () => {
    assert.deepEqual(planMembers([{ ...member(1), subnetId: 'other' }, member(2)], pool, have, false), []);
  });

  it('makes one call per member in serial mode', () => {
    const steps = planMembers([member(2), member(3), { ...member(4) }], pool, have, true);
    assert.deepEqual(
      steps.map((s) => s.op),
      ['deleteMember', 'createMember', 'createMember'],
    );
  });
});

describe('ownership', () => {
  it('on an owned load balancer: its own, untagged ones, not another identity’s', () => {
    const own = ownership(desired(), true);
    const l = current().listeners[0]!;
    assert.equal(own.listener(l), true);
    assert.equal(own.listener({ ...l, name: 'x', tags: [] }), true);
    assert.equal(own.listener({ ...l, name: 'x', tags: ['kube_service_c_ns_other'] }), false);
  });

  it('on a shared one: only what carries its tag or its names', () => {
    const own = ownership(desired(), false);
    const l = current().listeners[0]!;
    assert.equal(own.listener({ ...l, name: 'x', tags: [] }), false);
    assert.equal(own.listener({ ...l, name: 'x', tags: [NAME] }), true);
  });
});

describe('createBody', () => {
  it('puts listeners, pools, members and monitors in one request', () => {
    const body = createBody(desired(), { tags: true, serial: false });
    const pool = body.listeners?.[0]?.default_pool;
    assert.equal(pool?.members?.length, 2);
    assert.equal(pool?.healthmonitor?.type, 'TCP');
    assert.deepEqual(body.tags, [NAME]);
  });

  it('sends the load balancer alone in serial mode, without tags when the cloud has none', () => {
    const body = createBody(desired(), { tags: false, serial: true });
    assert.equal(body.listeners, undefined);
    assert.equal(body.tags, undefined);
  });
});

describe('backoff', () => {
  const lb = (updated: string | null, created = '2024-01-01T00:00:00') =>
    ({ updated_at: updated, created_at: created, provisioning_status: 'PENDING_UPDATE' }) as LoadBalancer;
  const policy = backoffPolicy({ initialMs: 1_000, maxMs: 60_000, stuckAfterMs: 300_000 });
  const t0 = Date.UTC(2024, 0, 1);

  it('caps the hint at 10 s whatever is asked', () => {
    assert.equal(policy.maxMs, 10_000);
  });

  it('grows with the age of the PENDING state, between the floor and the cap', () => {
    assert.equal(pendingHint(lb(null), t0 + 500, policy).retryAfterMs, 1_000);
    assert.equal(pendingHint(lb(null), t0 + 8_000, policy).retryAfterMs, 4_000);
    assert.equal(pendingHint(lb(null), t0 + 120_000, policy).retryAfterMs, 10_000);
    assert.equal(pendingHint(lb('2024-01-01T00:01:00'), t0 + 64_000, policy).retryAfterMs, 2_000);
  });

  it("with Octavia's phase durations: looks when the phase should be over, then every 5 % of it, then by age", () => {
    const phased = backoffPolicy({ initialMs: 1_000, phases: AMPHORA_PHASES });
    const pending = (status: string) =>
      ({ updated_at: null, created_at: '2024-01-01T00:00:00', provisioning_status: status }) as LoadBalancer;
    const hint = (status: string, age: number) =>
      pendingHint(pending(status), t0 + age, phased, status).retryAfterMs;
    // The first look after a write is the phase's end, not the 1 s floor.
    assert.equal(afterWrite(phased, 'create'), 30_000);
    assert.equal(afterWrite(phased, 'update'), 5_000);
    assert.equal(afterWrite(policy, 'update'), 1_000, 'without phases: the floor, as before');
    assert.equal(hint('PENDING_CREATE', 12_000), 18_000, 'the rest of the create');
    assert.equal(hint('PENDING_CREATE', 30_500), 1_500, '5 % of 30 s once it is due');
    assert.equal(hint('PENDING_UPDATE', 4_000), 1_000);
    assert.equal(hint('PENDING_UPDATE', 4_900), 250, 'never below the fine poll');
    assert.equal(hint('PENDING_UPDATE', 6_000), 250);
    assert.equal(hint('PENDING_DELETE', 5_200), 250);
    assert.equal(hint('PENDING_UPDATE', 15_500), 250, "within 3× its duration and the timestamps' second");
    assert.equal(hint('PENDING_UPDATE', 16_000), 8_000, 'past 3× its duration: by age again');
  });

  it('calls a PENDING older than the threshold stuck', () => {
    const hint = pendingHint(lb(null), t0 + 301_000, policy);
    assert.equal(hint.stuck, true);
    assert.equal(hint.retryAfterMs, 10_000);
  });
});
