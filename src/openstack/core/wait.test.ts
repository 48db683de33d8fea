/**
 * Waiters: an Octavia load balancer to ACTIVE and then gone (emulator or real cloud), an ERROR
 * state ending the wait at once, timeouts and aborts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { OpenStackClient } from '../client.ts';
import { isNotFound, ResourceErrorStateError, WaitTimeoutError } from './errors.ts';
import type { ServiceClient } from './service-client.ts';
import { addFault, clearFaults, openClientTarget, unique, type ClientTarget } from './testing/target.ts';
import { waitFor, waitForDeletion } from './wait.ts';

interface LoadBalancer {
  id: string;
  provisioning_status: string;
}

describe('waiters', () => {
  let t: ClientTarget;
  let demo: OpenStackClient;
  let lbs: ServiceClient;
  let subnetId: string;
  const undo: (() => Promise<unknown>)[] = [];
  before(async () => {
    t = await openClientTarget();
    demo = await t.client(t.demo);
    lbs = demo.serviceClient('load-balancer');
    const network = demo.serviceClient('network');
    const net = await network.request<{ network: { id: string } }>({
      method: 'POST',
      path: 'networks',
      body: { network: { name: unique('client-wait') } },
      label: 'network_create',
    });
    undo.push(() =>
      network.request({ method: 'DELETE', path: `networks/${net.body.network.id}`, label: 'network_delete' }),
    );
    const subnet = await network.request<{ subnet: { id: string } }>({
      method: 'POST',
      path: 'subnets',
      body: { subnet: { network_id: net.body.network.id, cidr: '10.66.0.0/24', ip_version: 4 } },
      label: 'subnet_create',
    });
    subnetId = subnet.body.subnet.id;
  });
  after(async () => {
    for (const u of undo.reverse()) await u().catch(() => undefined);
    await t?.close();
  });

  const createLb = async () => {
    const res = await lbs.request<{ loadbalancer: LoadBalancer }>({
      method: 'POST',
      path: 'lbaas/loadbalancers',
      body: { loadbalancer: { name: unique('client-wait'), vip_subnet_id: subnetId } },
      label: 'loadbalancer_create',
    });
    const id = res.body.loadbalancer.id;
    undo.push(() =>
      lbs.request({
        method: 'DELETE',
        path: `lbaas/loadbalancers/${id}`,
        query: { cascade: true },
        label: 'loadbalancer_delete',
      }),
    );
    return id;
  };
  const getLb = (id: string) => async (signal: AbortSignal | undefined) =>
    (
      await lbs.request<{ loadbalancer: LoadBalancer }>({
        method: 'GET',
        path: `lbaas/loadbalancers/${id}`,
        label: 'loadbalancer_get',
        signal,
      })
    ).body.loadbalancer;
  const lbWait = (id: string, timeoutMs = 60_000) => ({
    get: getLb(id),
    done: (lb: LoadBalancer) => lb.provisioning_status === 'ACTIVE',
    failed: (lb: LoadBalancer) => (lb.provisioning_status === 'ERROR' ? { status: 'ERROR' } : undefined),
    statusOf: (lb: LoadBalancer) => lb.provisioning_status,
    describe: `load balancer ${id} to become ACTIVE`,
    resourceId: id,
    timeoutMs,
    intervalMs: t.sim ? 10 : 250,
  });

  it('waits for a load balancer to become ACTIVE, then for it to be gone', async () => {
    const id = await createLb();
    const lb = await waitFor(lbWait(id));
    assert.equal(lb.provisioning_status, 'ACTIVE');
    await lbs.request({
      method: 'DELETE',
      path: `lbaas/loadbalancers/${id}`,
      query: { cascade: true },
      label: 'loadbalancer_delete',
    });
    await waitForDeletion({ ...lbWait(id), describe: `load balancer ${id} to be deleted` });
    await assert.rejects(getLb(id)(undefined), isNotFound);
  });

  it('ends the wait at once when the object goes to ERROR', async (s) => {
    if (!t.sim) return s.skip('needs fault injection');
    await addFault(t.sim, {
      kind: 'error-on-create',
      service: 'octavia',
      resource: 'loadbalancer',
      times: 1,
    });
    const id = await createLb();
    const started = Date.now();
    await assert.rejects(waitFor(lbWait(id, 30_000)), (e: unknown) => {
      assert.ok(ResourceErrorStateError.is(e), String(e));
      assert.deepEqual([e.resourceId, e.status], [id, 'ERROR']);
      return true;
    });
    assert.ok(Date.now() - started < 30_000);
  });

  it('times out with the last status seen', async (s) => {
    if (!t.sim) return s.skip('needs fault injection');
    await addFault(t.sim, { kind: 'stuck', service: 'octavia', resource: 'loadbalancer', times: 1 });
    const id = await createLb();
    try {
      await assert.rejects(waitFor(lbWait(id, 150)), (e: unknown) => {
        assert.ok(WaitTimeoutError.is(e), String(e));
        assert.equal(
          e.message,
          `timed out after 150 ms waiting for load balancer ${id} to become ACTIVE (last status PENDING_CREATE)`,
        );
        return true;
      });
    } finally {
      await clearFaults(t.sim);
    }
  });

  it('fails on the first poll that shows an error state, without sleeping', async () => {
    const sleeps: number[] = [];
    const clock = {
      now: () => 0,
      random: () => 0,
      setTimer: () => () => {},
      sleep: (ms: number) => Promise.resolve(void sleeps.push(ms)),
    };
    await assert.rejects(
      waitFor({
        get: () => Promise.resolve({ status: 'ERROR', fault: { message: 'No valid host was found.' } }),
        done: (v) => v.status === 'ACTIVE',
        failed: (v) => (v.status === 'ERROR' ? { status: v.status, fault: v.fault.message } : undefined),
        describe: 'server s1 to become ACTIVE',
        resourceId: 's1',
        timeoutMs: 60_000,
        clock,
      }),
      (e: unknown) => ResourceErrorStateError.is(e) && e.fault === 'No valid host was found.',
    );
    assert.deepEqual(sleeps, []);
  });

  it("stops with the signal's reason when aborted", async () => {
    const abort = new AbortController();
    setTimeout(() => abort.abort(new Error('shutting down')), 30);
    await assert.rejects(
      waitFor({
        get: () => Promise.resolve({ status: 'BUILD' }),
        done: (v) => v.status === 'ACTIVE',
        describe: 'server s1 to become ACTIVE',
        timeoutMs: 60_000,
        intervalMs: 5,
        signal: abort.signal,
      }),
      /shutting down/,
    );
  });

  it('backs off from intervalMs up to maxIntervalMs', async () => {
    const sleeps: number[] = [];
    let now = 0;
    const clock = {
      now: () => now,
      random: () => 0,
      setTimer: () => () => {},
      sleep: (ms: number) => {
        sleeps.push(ms);
        now += ms;
        return Promise.resolve();
      },
    };
    await assert.rejects(
      waitFor({
        get: () => Promise.resolve(1),
        done: () => false,
        describe: 'x',
        timeoutMs: 20_000,
        intervalMs: 1000,
        maxIntervalMs: 3000,
        clock,
      }),
      WaitTimeoutError.is,
    );
    assert.deepEqual(sleeps.slice(0, 5), [1000, 1500, 2250, 3000, 3000]);
    assert.equal(
      sleeps.reduce((a, b) => a + b, 0),
      20_000,
    );
  });
});
