/**
 * The service controller's wake-ups: once a Service is Ready, neither its own status and
 * annotation writes nor anyone's status-only write reconcile it again; a change to its metadata
 * does, once, whatever that reconcile writes back. A pool's members are read again only once the
 * pool has changed since they were found as desired.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Service } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import { reconcileCount, settled } from '../../kube/testing/settle.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { Annotation } from '../service/annotations.ts';
import { counterValue, startCcmEnv, type CcmEnv, type RunningCcm } from '../testing/env.ts';
import type { StatsSnapshot } from '../../sim/openstack/core/stats.ts';
import { SERVICE_CONTROLLER } from './service.ts';

const WAIT = { timeoutMs: 60_000, intervalMs: 25 };

/** The ccm's member list calls (every page is one). */
const memberReads = (ccm: RunningCcm) =>
  counterValue(ccm.registry, 'openstack_api_requests_total', { request: 'loadbalancer_member_list' });

describe('service controller: reconciles', () => {
  let env: CcmEnv;
  let ccm: RunningCcm;

  before(async () => {
    env = await startCcmEnv();
    const { subnet, publicNetwork: pub } = await env.routedSubnet('10.20.0.0/16');
    for (let i = 1; i <= 2; i++) {
      await env.api.create(kinds.Node, {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: `node-${i}` },
        status: { addresses: [{ type: 'InternalIP', address: `10.20.0.${10 + i}` }] },
      });
    }
    ccm = await env.startCcm({
      controllers: ['service'],
      cloudConfig: await env.cloudConf(
        `[LoadBalancer]\nsubnet-id = ${subnet.id}\nfloating-network-id = ${pub.id}\n`,
      ),
    });
  });
  after(async () => {
    await env?.close();
  });

  it('a Ready Service is not reconciled again for its own writes or a status-only change', async () => {
    const key = { namespace: 'default', name: 'web' };
    await env.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { ...key },
      spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ protocol: 'TCP', port: 80 }] },
    });
    const isReady = (s: V1Service) =>
      (s.status?.loadBalancer?.ingress ?? []).length > 0 &&
      s.metadata?.annotations?.[Annotation.LoadBalancerAddress] !== undefined;
    await eventually(async () => isReady(await env.api.get(kinds.Service, key)), {
      ...WAIT,
      what: 'the Service Ready',
    });
    const mgr = ccm.ccm.manager;
    const watched = [[kinds.Service, key]] as const;
    await settled(mgr, SERVICE_CONTROLLER, watched, { timeoutMs: WAIT.timeoutMs });
    const ready = await reconcileCount(mgr, SERVICE_CONTROLLER);

    // Someone wipes the status: a status-only change, which wakes nothing (as upstream's needsUpdate).
    await env.api.patch(
      kinds.Service,
      key,
      'merge',
      { status: { loadBalancer: { ingress: null } } },
      {
        subresource: 'status',
      },
    );
    await settled(mgr, SERVICE_CONTROLLER, watched, { timeoutMs: WAIT.timeoutMs });
    assert.equal(await reconcileCount(mgr, SERVICE_CONTROLLER), ready, 'a status-only change');

    // Someone removes the address annotation: one reconcile, which writes the annotation and the
    // status back; neither of those writes of its own wakes it again. The pool has not changed
    // since its members were found as desired: they are not read again.
    const reads = await memberReads(ccm);
    await env.api.patch(kinds.Service, key, 'json', [
      { op: 'remove', path: `/metadata/annotations/${Annotation.LoadBalancerAddress.replace('/', '~1')}` },
    ]);
    await eventually(async () => isReady(await env.api.get(kinds.Service, key)), {
      ...WAIT,
      what: 'the annotation and the status written back',
    });
    await settled(mgr, SERVICE_CONTROLLER, watched, { timeoutMs: WAIT.timeoutMs });
    assert.equal(await reconcileCount(mgr, SERVICE_CONTROLLER), ready + 1, 'one reconcile for one change');
    assert.equal(await memberReads(ccm), reads, 'members of an unchanged pool');
  });

  it('a deletion asks Neutron for no member security group this ccm found absent and makes none', async () => {
    const key = { namespace: 'default', name: 'gone' };
    await env.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { ...key },
      spec: { type: 'LoadBalancer', selector: { app: 'gone' }, ports: [{ protocol: 'TCP', port: 80 }] },
    });
    await eventually(
      async () => ((await env.api.get(kinds.Service, key)).status?.loadBalancer?.ingress ?? []).length > 0,
      { ...WAIT, what: 'the Service Ready' },
    );
    await fetch(`${env.sim.url}/_sim/stats`, { method: 'DELETE' });
    await env.api.delete(kinds.Service, key);
    await eventually(
      async () =>
        (await env.api.list(kinds.Service, { namespace: 'default' })).items.every(
          (s) => s.metadata?.name !== 'gone',
        ),
      { ...WAIT, what: 'the Service gone' },
    );
    const stats = (await (await fetch(`${env.sim.url}/_sim/stats`)).json()) as StatsSnapshot;
    const neutron = stats.services['neutron']?.operations ?? {};
    assert.equal(neutron['GET /v2.0/security-groups']?.count ?? 0, 0, 'no security group looked for');
    assert.equal(neutron['DELETE /v2.0/floatingips/{floatingip_id}']?.count, 1, 'its floating IP deleted');
    assert.equal(
      (await env.os.loadBalancer.loadBalancers.list({ name: 'kube_service_kubernetes_default_gone' }).all())
        .length,
      0,
    );
  });
});

describe('service controller: a burst of Nodes', () => {
  let env: CcmEnv;

  before(async () => {
    env = await startCcmEnv();
  });
  after(async () => {
    await env?.close();
  });

  it('Nodes joining and leaving together cost one member update per pool, not one per Node', async () => {
    const { subnet, publicNetwork: pub } = await env.routedSubnet('10.30.0.0/16');
    const node = (i: number) =>
      env.api.create(kinds.Node, {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: `burst-${i}` },
        status: { addresses: [{ type: 'InternalIP', address: `10.30.0.${10 + i}` }] },
      });
    for (let i = 0; i < 4; i++) await node(i);
    // A window wide enough that a loaded machine's API calls stay inside it.
    const ccm = await env.startCcm(
      {
        controllers: ['service'],
        cloudConfig: await env.cloudConf(
          `[LoadBalancer]\nsubnet-id = ${subnet.id}\nfloating-network-id = ${pub.id}\n`,
        ),
      },
      {},
      { serviceNodeBatchWindowMs: 1_000 },
    );
    const key = { namespace: 'default', name: 'burst' };
    await env.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { ...key },
      spec: {
        type: 'LoadBalancer',
        selector: { app: 'burst' },
        ports: [
          { name: 'http', protocol: 'TCP', port: 80 },
          { name: 'https', protocol: 'TCP', port: 443 },
        ],
      },
    });
    await eventually(
      async () => ((await env.api.get(kinds.Service, key)).status?.loadBalancer?.ingress ?? []).length > 0,
      { ...WAIT, what: 'the Service Ready' },
    );
    const mgr = ccm.ccm.manager;
    await settled(mgr, SERVICE_CONTROLLER, [[kinds.Service, key]], { timeoutMs: WAIT.timeoutMs });
    await fetch(`${env.sim.url}/_sim/stats`, { method: 'DELETE' });
    const reads = await memberReads(ccm);

    // One by one, as kubelets register and the autoscaler deletes: 6 join, 2 leave.
    for (let i = 4; i < 10; i++) await node(i);
    for (let i = 0; i < 2; i++) await env.api.delete(kinds.Node, { name: `burst-${i}` });

    const [lb] = await env.os.loadBalancer.loadBalancers.list().all();
    assert.ok(lb);
    const pools = await env.os.loadBalancer.pools.list({ loadbalancer_id: lb.id }).all();
    assert.equal(pools.length, 2);
    const want = Array.from({ length: 8 }, (_, i) => `10.30.0.${12 + i}`).sort();
    await eventually(
      async () => {
        for (const p of pools) {
          const members = await env.os.loadBalancer.members.list(p.id).all();
          const active = members.every((m) => m.provisioning_status === 'ACTIVE');
          if (!active || JSON.stringify(members.map((m) => m.address).sort()) !== JSON.stringify(want))
            return false;
        }
        return true;
      },
      { ...WAIT, what: 'both pools with the 8 Nodes' },
    );
    const stats = (await (await fetch(`${env.sim.url}/_sim/stats`)).json()) as StatsSnapshot;
    const puts = stats.services['octavia']?.operations['PUT /v2/lbaas/pools/{pool_id}/members']?.count;
    assert.equal(puts, 2, 'one batch member update per pool');
    // Each pool's members were found as desired when the Service became Ready: the burst is planned
    // from that, and each pool is read once, after its update, to find it as desired again.
    await settled(mgr, SERVICE_CONTROLLER, [[kinds.Service, key]], { timeoutMs: WAIT.timeoutMs });
    assert.equal((await memberReads(ccm)) - reads, 2, 'one member read per pool');
  });
});
