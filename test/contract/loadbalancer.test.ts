import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Cleanup, network } from './fixtures.ts';
import { openTarget, unique, waitFor, type Session, type Target } from './target.ts';

const lb = (s: Session, id: string) => s.request('load-balancer', 'GET', `/v2/lbaas/loadbalancers/${id}`);

async function active(s: Session, id: string) {
  return waitFor(`load balancer ${id} ACTIVE`, async () => {
    const res = await lb(s, id);
    const status: string = res.body.loadbalancer.provisioning_status;
    assert.notEqual(status, 'ERROR');
    return status === 'ACTIVE' ? res.body.loadbalancer : undefined;
  });
}

/**
 * A write while the load balancer is PENDING_* must be refused with Octavia's message. On a real
 * cloud the worker may finish before our next call lands, so there a success is a lost race, not a bug.
 */
function expectPendingConflict(t: Target, res: { status: number; body: any }, message: string) {
  if (!t.emulated && res.status >= 200 && res.status < 300) return;
  assert.equal(res.status, 409, JSON.stringify(res.body));
  assert.equal(res.body.faultstring, message);
}

describe('contract: load balancer', () => {
  let t: Target;
  before(async () => (t = await openTarget()));
  after(async () => t?.close());

  it('lists the providers', async () => {
    const res = await t.demo.request('load-balancer', 'GET', '/v2/lbaas/providers');
    assert.equal(res.status, 200);
    assert.ok(res.body.providers.some((p: { name: string }) => p.name === 'amphora'));
  });

  it('builds a load balancer step by step, waits out PENDING_* states, and cascade-deletes it', async () => {
    const cleanup = new Cleanup();
    try {
      const { subnet } = await network(t.demo, cleanup);
      const created = await t.demo.request('load-balancer', 'POST', '/v2/lbaas/loadbalancers', {
        loadbalancer: { name: unique('contract-lb'), vip_subnet_id: subnet.id, tags: ['contract'] },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const id: string = created.body.loadbalancer.id;
      cleanup.add(async () => {
        await t.demo.request('load-balancer', 'DELETE', `/v2/lbaas/loadbalancers/${id}?cascade=true`);
        await waitFor('load balancer gone', async () =>
          (await lb(t.demo, id)).status === 404 ? true : undefined,
        );
      });
      assert.equal(created.body.loadbalancer.provisioning_status, 'PENDING_CREATE');
      assert.equal(created.body.loadbalancer.vip_subnet_id, subnet.id);

      const early = await t.demo.request('load-balancer', 'PUT', `/v2/lbaas/loadbalancers/${id}`, {
        loadbalancer: { description: 'x' },
      });
      expectPendingConflict(t, early, `Invalid state PENDING_CREATE of loadbalancer resource ${id}`);
      await active(t.demo, id);

      const listener = await t.demo.request('load-balancer', 'POST', '/v2/lbaas/listeners', {
        listener: { loadbalancer_id: id, protocol: 'TCP', protocol_port: 6443, name: 'api' },
      });
      assert.equal(listener.status, 201, JSON.stringify(listener.body));
      const listenerId: string = listener.body.listener.id;
      const immutable = await t.demo.request('load-balancer', 'PUT', `/v2/lbaas/listeners/${listenerId}`, {
        listener: { description: 'y' },
      });
      expectPendingConflict(t, immutable, `Load Balancer ${id} is immutable and cannot be updated.`);
      await active(t.demo, id);

      const pool = await t.demo.request('load-balancer', 'POST', '/v2/lbaas/pools', {
        pool: { listener_id: listenerId, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN', name: 'api' },
      });
      assert.equal(pool.status, 201, JSON.stringify(pool.body));
      const poolId: string = pool.body.pool.id;
      await active(t.demo, id);

      const member = await t.demo.request('load-balancer', 'POST', `/v2/lbaas/pools/${poolId}/members`, {
        member: { address: '10.0.0.10', protocol_port: 6443, subnet_id: subnet.id },
      });
      assert.equal(member.status, 201);
      const keptId: string = member.body.member.id;
      await active(t.demo, id);
      const duplicate = await t.demo.request('load-balancer', 'POST', `/v2/lbaas/pools/${poolId}/members`, {
        member: { address: '10.0.0.10', protocol_port: 6443 },
      });
      assert.equal(duplicate.status, 409);

      const batch = await t.demo.request('load-balancer', 'PUT', `/v2/lbaas/pools/${poolId}/members`, {
        members: [
          { address: '10.0.0.10', protocol_port: 6443, weight: 5 },
          { address: '10.0.0.11', protocol_port: 6443 },
          { address: '10.0.0.12', protocol_port: 6443 },
        ],
      });
      assert.equal(batch.status, 202);
      assert.equal(batch.body, undefined, 'the batch update answers 202 with an empty body');
      await active(t.demo, id);
      const members = await t.demo.request('load-balancer', 'GET', `/v2/lbaas/pools/${poolId}/members`);
      const byAddress = new Map(members.body.members.map((m: { address: string }) => [m.address, m]));
      assert.deepEqual([...byAddress.keys()].sort(), ['10.0.0.10', '10.0.0.11', '10.0.0.12']);
      const kept = byAddress.get('10.0.0.10') as { id: string; weight: number };
      assert.equal(kept.id, keptId, 'a member matching address and port keeps its id');
      assert.equal(kept.weight, 5);

      const monitor = await t.demo.request('load-balancer', 'POST', '/v2/lbaas/healthmonitors', {
        healthmonitor: { pool_id: poolId, type: 'TCP', delay: 5, timeout: 3, max_retries: 3 },
      });
      assert.equal(monitor.status, 201);
      await active(t.demo, id);
      const second = await t.demo.request('load-balancer', 'POST', '/v2/lbaas/healthmonitors', {
        healthmonitor: { pool_id: poolId, type: 'TCP', delay: 5, timeout: 3, max_retries: 3 },
      });
      assert.equal(second.status, 409);

      const tree = await t.demo.request('load-balancer', 'GET', `/v2/lbaas/loadbalancers/${id}/status`);
      const listeners = tree.body.statuses.loadbalancer.listeners;
      assert.equal(listeners[0].pools[0].members.length, 3);
      assert.equal(listeners[0].pools[0].health_monitor.id, monitor.body.healthmonitor.id);

      const tagged = await t.demo.request(
        'load-balancer',
        'GET',
        `/v2/lbaas/loadbalancers?tags=contract&id=${id}`,
      );
      assert.equal(tagged.body.loadbalancers.length, 1);

      const withChildren = await t.demo.request('load-balancer', 'DELETE', `/v2/lbaas/loadbalancers/${id}`);
      assert.equal(withChildren.status, 400);
      const cascade = await t.demo.request(
        'load-balancer',
        'DELETE',
        `/v2/lbaas/loadbalancers/${id}?cascade=true`,
      );
      assert.equal(cascade.status, 204);
      await waitFor('load balancer gone', async () =>
        (await lb(t.demo, id)).status === 404 ? true : undefined,
      );
    } finally {
      await cleanup.run();
    }
  });

  it('creates a fully populated load balancer in one call', async () => {
    const cleanup = new Cleanup();
    try {
      const { subnet } = await network(t.demo, cleanup);
      const created = await t.demo.request('load-balancer', 'POST', '/v2/lbaas/loadbalancers', {
        loadbalancer: {
          name: unique('contract-full'),
          vip_subnet_id: subnet.id,
          listeners: [
            {
              name: 'https',
              protocol: 'TCP',
              protocol_port: 443,
              default_pool: {
                name: 'https',
                protocol: 'TCP',
                lb_algorithm: 'ROUND_ROBIN',
                members: [{ address: '10.0.0.20', protocol_port: 30443 }],
                healthmonitor: { type: 'TCP', delay: 5, timeout: 3, max_retries: 3 },
              },
            },
          ],
        },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const id: string = created.body.loadbalancer.id;
      cleanup.add(async () => {
        await t.demo.request('load-balancer', 'DELETE', `/v2/lbaas/loadbalancers/${id}?cascade=true`);
        await waitFor('load balancer gone', async () =>
          (await lb(t.demo, id)).status === 404 ? true : undefined,
        );
      });
      assert.equal(created.body.loadbalancer.listeners.length, 1);
      const ready = await active(t.demo, id);
      assert.equal(ready.pools.length, 1);
      const unnamed = await t.demo.request('load-balancer', 'POST', '/v2/lbaas/loadbalancers', {
        loadbalancer: {
          vip_subnet_id: subnet.id,
          listeners: [
            {
              protocol: 'TCP',
              protocol_port: 80,
              default_pool: { protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' },
            },
          ],
        },
      });
      assert.equal(unnamed.status, 400);
    } finally {
      await cleanup.run();
    }
  });
});
