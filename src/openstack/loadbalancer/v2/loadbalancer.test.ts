/**
 * Octavia v2 through `client.loadBalancer`, against the emulator or the real cloud of OS_CLOUD. On
 * the real test cloud (noop drivers) the VIP is fake, operating status stays OFFLINE and the children
 * of a fully populated load balancer stay PENDING_CREATE: assertions wait on the load balancer's
 * provisioning status only, as controllers must.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRegistry } from '../../../lib/metrics.ts';
import type { OpenStackClient } from '../../client.ts';
import {
  isBadRequest,
  isConflict,
  isNotFound,
  ResourceErrorStateError,
  WaitTimeoutError,
} from '../../core/errors.ts';
import { requestCount } from '../../core/testing/metrics.ts';
import {
  addFault,
  clearFaults,
  openClientTarget,
  unique,
  type ClientTarget,
} from '../../core/testing/target.ts';
import type { Subnet } from '../../network/v2/subnets.ts';
import { Cleanup, scratchNetwork, waitTimings } from '../../network/v2/testing/fixtures.ts';
import type { LoadBalancer } from './loadbalancers.ts';

describe('load-balancer v2', () => {
  let t: ClientTarget;
  let os: OpenStackClient;
  let subnet: Subnet;
  const registry = createRegistry({ defaultMetrics: false });
  const cleanup = new Cleanup();
  let wait: ReturnType<typeof waitTimings>;

  before(async () => {
    t = await openClientTarget();
    os = await t.client(t.demo, { registry });
    wait = waitTimings(t);
    ({ subnet } = await scratchNetwork(os, cleanup, 'client-lb'));
  });
  after(async () => {
    await cleanup.run();
    await t?.close();
  });

  /** A load balancer deleted (cascade, then awaited) at the end of the suite unless the test did it. */
  const createLb = async (extra: Record<string, unknown> = {}): Promise<LoadBalancer> => {
    const lb = await os.loadBalancer.loadBalancers.create({
      name: unique('client-lb'),
      vip_subnet_id: subnet.id,
      ...extra,
    });
    cleanup.add(`load balancer ${lb.id}`, async () => {
      const current = await os.loadBalancer.loadBalancers.get(lb.id);
      if (
        current.provisioning_status.startsWith('PENDING_') &&
        current.provisioning_status !== 'PENDING_DELETE'
      )
        await os.loadBalancer.loadBalancers.waitForActive(lb.id, wait).catch(() => undefined);
      if (current.provisioning_status !== 'PENDING_DELETE')
        await os.loadBalancer.loadBalancers.delete(lb.id, { cascade: true });
      await os.loadBalancer.loadBalancers.waitForDeleted(lb.id, wait);
    });
    return lb;
  };

  it('builds a load balancer step by step, reads it, and deletes it with cascade', async () => {
    const lbs = os.loadBalancer.loadBalancers;
    const created = await createLb({ description: 'step by step' });
    assert.equal(created.provisioning_status, 'PENDING_CREATE');
    assert.equal(created.vip_subnet_id, subnet.id);
    const active = await lbs.waitForActive(created.id, wait);
    assert.equal(active.provisioning_status, 'ACTIVE');
    assert.ok(active.vip_address);
    assert.deepEqual(
      (await lbs.list({ name: created.name }).all()).map((l) => l.id),
      [created.id],
    );
    const updated = await lbs.update(created.id, { description: 'renamed' });
    assert.equal(updated.description, 'renamed');
    await lbs.waitForActive(created.id, wait);

    const listener = await os.loadBalancer.listeners.create({
      loadbalancer_id: created.id,
      name: unique('client-listener'),
      protocol: 'TCP',
      protocol_port: 80,
    });
    assert.equal(listener.protocol_port, 80);
    await lbs.waitForActive(created.id, wait);
    const pool = await os.loadBalancer.pools.create({
      listener_id: listener.id,
      name: unique('client-pool'),
      protocol: 'TCP',
      lb_algorithm: 'ROUND_ROBIN',
    });
    await lbs.waitForActive(created.id, wait);
    assert.equal((await os.loadBalancer.listeners.get(listener.id)).default_pool_id, pool.id);
    const member = await os.loadBalancer.members.create(pool.id, {
      address: '10.0.0.11',
      protocol_port: 8080,
      subnet_id: subnet.id,
    });
    await lbs.waitForActive(created.id, wait);
    const weighted = await os.loadBalancer.members.update(pool.id, member.id, { weight: 7 });
    assert.equal(weighted.weight, 7);
    await lbs.waitForActive(created.id, wait);
    assert.equal((await os.loadBalancer.members.get(pool.id, member.id)).weight, 7);
    const monitor = await os.loadBalancer.healthMonitors.create({
      pool_id: pool.id,
      type: 'TCP',
      delay: 5,
      timeout: 3,
      max_retries: 3,
    });
    await lbs.waitForActive(created.id, wait);
    assert.equal((await os.loadBalancer.pools.get(pool.id)).healthmonitor_id, monitor.id);
    assert.deepEqual(
      (await os.loadBalancer.listeners.list({ loadbalancer_id: created.id }).all()).map((l) => l.id),
      [listener.id],
    );
    assert.deepEqual(
      (await os.loadBalancer.pools.list({ loadbalancer_id: created.id }).all()).map((p) => p.id),
      [pool.id],
    );

    const stats = await lbs.stats(created.id);
    assert.equal(typeof stats.bytes_in, 'number');
    const tree = await lbs.statusTree(created.id);
    assert.equal(tree.id, created.id);
    assert.equal(tree.listeners[0]?.id, listener.id);
    assert.equal(tree.listeners[0]?.pools[0]?.members[0]?.id, member.id);
    assert.equal(tree.listeners[0]?.pools[0]?.health_monitor?.id, monitor.id);

    await assert.rejects(lbs.delete(created.id), isBadRequest);
    await lbs.delete(created.id, { cascade: true });
    await lbs.waitForDeleted(created.id, wait);
    await assert.rejects(lbs.get(created.id), isNotFound);
    assert.ok((await requestCount(registry, 'loadbalancer_listener_create')) >= 1);
    assert.ok((await requestCount(registry, 'loadbalancer_healthmonitor_create')) >= 1);
  });

  it('creates a fully populated load balancer in one call', async () => {
    const created = await createLb({
      listeners: [
        {
          name: 'tcp',
          protocol: 'TCP',
          protocol_port: 443,
          default_pool: {
            name: 'tcp-pool',
            protocol: 'TCP',
            lb_algorithm: 'LEAST_CONNECTIONS',
            healthmonitor: { type: 'TCP', delay: 5, timeout: 3, max_retries: 2 },
            members: [
              { address: '10.0.0.21', protocol_port: 443 },
              { address: '10.0.0.22', protocol_port: 443 },
            ],
          },
        },
      ],
    });
    // The create answer holds the children whole, not as ids.
    assert.equal((created.listeners[0] as unknown as { name: string }).name, 'tcp');
    await os.loadBalancer.loadBalancers.waitForActive(created.id, wait);
    const listeners = await os.loadBalancer.listeners.list({ loadbalancer_id: created.id }).all();
    assert.deepEqual(
      listeners.map((l) => [l.protocol, l.protocol_port]),
      [['TCP', 443]],
    );
    const [pool] = await os.loadBalancer.pools.list({ loadbalancer_id: created.id }).all();
    assert.equal(pool?.name, 'tcp-pool');
    assert.deepEqual((await os.loadBalancer.members.list(pool.id).all()).map((m) => m.address).sort(), [
      '10.0.0.21',
      '10.0.0.22',
    ]);
    assert.ok(pool.healthmonitor_id);
  });

  it('replaces a pool’s members in one batch: kept by address and port, created, deleted', async () => {
    const lbs = os.loadBalancer.loadBalancers;
    const lb = await createLb();
    await lbs.waitForActive(lb.id, wait);
    const pool = await os.loadBalancer.pools.create({
      loadbalancer_id: lb.id,
      name: unique('client-batch'),
      protocol: 'TCP',
      lb_algorithm: 'ROUND_ROBIN',
    });
    await lbs.waitForActive(lb.id, wait);
    await os.loadBalancer.members.replace(pool.id, [
      { address: '10.0.0.31', protocol_port: 80 },
      { address: '10.0.0.32', protocol_port: 80, name: 'b' },
    ]);
    await lbs.waitForActive(lb.id, wait);
    const first = await os.loadBalancer.members.list(pool.id).all();
    const a = first.find((m) => m.address === '10.0.0.31');
    assert.ok(a);
    assert.equal(first.length, 2);

    await os.loadBalancer.members.replace(pool.id, [
      { address: '10.0.0.31', protocol_port: 80, weight: 5 },
      { address: '10.0.0.33', protocol_port: 80 },
    ]);
    await lbs.waitForActive(lb.id, wait);
    const second = await os.loadBalancer.members.list(pool.id).all();
    assert.deepEqual(second.map((m) => m.address).sort(), ['10.0.0.31', '10.0.0.33']);
    const kept = second.find((m) => m.address === '10.0.0.31');
    assert.equal(kept?.id, a.id, 'a member matching by address and port keeps its id');
    assert.equal(kept?.weight, 5);

    await os.loadBalancer.members.replace(pool.id, []);
    await lbs.waitForActive(lb.id, wait);
    assert.deepEqual(await os.loadBalancer.members.list(pool.id).all(), []);
    assert.equal(await requestCount(registry, 'loadbalancer_members_update'), 3);
  });

  it('pages through load balancers', async () => {
    const tag = unique('client-lbpage');
    const ids = [(await createLb({ tags: [tag] })).id, (await createLb({ tags: [tag] })).id];
    for (const id of ids) await os.loadBalancer.loadBalancers.waitForActive(id, wait);
    const pages = [];
    for await (const page of os.loadBalancer.loadBalancers.list({ tags: [tag], limit: 1 }).pages())
      pages.push(page);
    assert.ok(pages.length >= 2, `${pages.length} pages`);
    assert.deepEqual(pages.flatMap((p) => p.items.map((l) => l.id)).sort(), [...ids].sort());
  });

  it('adds an L7 policy with a rule to an HTTP listener, and fails the load balancer over as an admin', async () => {
    const lbs = os.loadBalancer.loadBalancers;
    const lb = await createLb();
    await lbs.waitForActive(lb.id, wait);
    const listener = await os.loadBalancer.listeners.create({
      loadbalancer_id: lb.id,
      protocol: 'HTTP',
      protocol_port: 8080,
    });
    await lbs.waitForActive(lb.id, wait);
    // Rules are created on their own: Zed answers 500 to rules nested in the policy create.
    const policy = await os.loadBalancer.l7Policies.create({ listener_id: listener.id, action: 'REJECT' });
    await lbs.waitForActive(lb.id, wait);
    await os.loadBalancer.l7Rules.create(policy.id, {
      type: 'PATH',
      compare_type: 'STARTS_WITH',
      value: '/admin',
    });
    await lbs.waitForActive(lb.id, wait);
    const rules = await os.loadBalancer.l7Rules.list(policy.id).all();
    assert.deepEqual(
      rules.map((r) => [r.type, r.compare_type, r.value]),
      [['PATH', 'STARTS_WITH', '/admin']],
    );
    const rule = await os.loadBalancer.l7Rules.update(policy.id, rules[0]!.id, { value: '/private' });
    assert.equal(rule.value, '/private');
    await lbs.waitForActive(lb.id, wait);
    await os.loadBalancer.l7Policies.delete(policy.id);
    await lbs.waitForActive(lb.id, wait);
    await assert.rejects(os.loadBalancer.l7Policies.get(policy.id), isNotFound);

    if (!t.admin) return;
    const admin = await t.client(t.admin);
    await admin.loadBalancer.loadBalancers.failover(lb.id);
    assert.equal((await admin.loadBalancer.loadBalancers.waitForActive(lb.id, wait)).id, lb.id);
  });

  it('lists providers, flavors and availability zones, and gates features on API versions', async () => {
    const providers = await os.loadBalancer.providers.list().all();
    assert.ok(providers.some((p) => p.name === 'amphora'));
    assert.ok(Array.isArray(await os.loadBalancer.flavors.list().all()));
    assert.ok(Array.isArray(await os.loadBalancer.availabilityZones.list().all()));
    const versions = await os.loadBalancer.versions();
    assert.ok(versions.supports('2.0'));
    assert.equal(await os.loadBalancer.supports('2.5'), true);
    assert.equal(await os.loadBalancer.supports('9.99'), false);
  });

  it('ends a wait at once when the load balancer goes to ERROR (emulator)', async (s) => {
    if (!t.sim) return s.skip('needs the emulator’s fault injection');
    await addFault(t.sim, {
      kind: 'error-on-create',
      service: 'octavia',
      resource: 'loadbalancer',
      times: 1,
    });
    const lb = await createLb();
    const err = await os.loadBalancer.loadBalancers.waitForActive(lb.id, wait).catch((e: unknown) => e);
    assert.ok(ResourceErrorStateError.is(err), String(err));
    assert.equal(err.status, 'ERROR');
    assert.equal(err.resourceId, lb.id);
    assert.match(err.message, /load balancer .* to become ACTIVE: .* went to status ERROR/);
  });

  it('times out, names the last status, and stops on abort (emulator)', async (s) => {
    if (!t.sim) return s.skip('needs the emulator’s fault injection');
    await addFault(t.sim, { kind: 'stuck', service: 'octavia', resource: 'loadbalancer', times: 1 });
    const lb = await createLb();
    try {
      const timeout = await os.loadBalancer.loadBalancers
        .waitForActive(lb.id, { timeoutMs: 100, intervalMs: 10 })
        .catch((e: unknown) => e);
      assert.ok(WaitTimeoutError.is(timeout), String(timeout));
      assert.equal(timeout.lastStatus, 'PENDING_CREATE');
      await assert.rejects(
        os.loadBalancer.listeners.create({ loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 81 }),
        isConflict,
      );
      const controller = new AbortController();
      const reason = new Error('shutting down');
      setTimeout(() => controller.abort(reason), 30);
      await assert.rejects(
        os.loadBalancer.loadBalancers.waitForActive(lb.id, { intervalMs: 10, signal: controller.signal }),
        (e: unknown) => e === reason,
      );
    } finally {
      await clearFaults(t.sim);
      // A stuck load balancer stays pending until the fault is gone; force it so cleanup can delete it.
      await fetch(`${t.sim.url}/_sim/state/octavia/loadbalancer/${lb.id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ provisioning_status: 'ACTIVE' }),
      });
    }
  });
});
