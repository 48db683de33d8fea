/**
 * The in-tree stand-in end to end, on both emulators: what kube-controller-manager with
 * `--cloud-provider=openstack` did to Octavia (the legacy names, one call at a time, TCP only), to
 * Nodes whose server is gone, and who decides that it runs (`--cloud-provider`, `--controllers`, the
 * KubeControllerManager's CloudControllerOwner). Every Octavia call is attributed to the stand-in by
 * its User-Agent in the emulator's journal.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EventsV1Event, V1Service } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import type { RequestRecord } from '../../sim/openstack/core/stats.ts';
import { LOAD_BALANCER_FINALIZER } from '../../ccm/controllers/service.ts';
import { startCcmEnv, type CcmEnv, type RoutedSubnet } from '../../ccm/testing/env.ts';
import {
  CLOUD_CONTROLLER_OWNER,
  CLOUD_PROVIDER_ANNOTATION,
  CLUSTER_OPERATOR,
  KUBE_CONTROLLER_MANAGER,
} from './cloud-owner.ts';
import { ONLY_TCP } from './load-balancer.ts';
import {
  bootServer,
  installHandshakeKinds,
  registerInTreeNode,
  startInTreeKcm,
  type RunningKcm,
} from './testing/env.ts';

const wait = { timeoutMs: 30_000, intervalMs: 25 };
const until = <T>(fn: () => Promise<T | undefined | false>, what: string) =>
  eventually(fn, { ...wait, what }) as Promise<T>;
const KCM_UA = 'shiftstack-kube-controller-manager';

describe('kube-controller-manager stand-in: the in-tree OpenStack cloud loops', () => {
  let env: CcmEnv;
  let net: RoutedSubnet;
  let kcm: RunningKcm;
  let conf: string;

  before(async () => {
    env = await startCcmEnv();
    net = await env.routedSubnet('10.40.0.0/16');
    for (const name of ['worker-1', 'worker-2'])
      await registerInTreeNode(env, await bootServer(env, name, net.network.id));
    conf = await env.cloudConf(
      `[LoadBalancer]\nsubnet-id = ${net.subnet.id}\nfloating-network-id = ${net.publicNetwork.id}\ncreate-monitor = true\n`,
    );
    kcm = await startInTreeKcm(env, { cloudConfig: conf });
  });
  after(async () => {
    await env?.close();
  });

  const get = (name: string) => env.api.get(kinds.Service, { namespace: 'default', name });
  function service(
    name: string,
    ports: { name?: string; protocol: string; port: number }[],
  ): Promise<V1Service> {
    return env.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: 'default' },
      spec: { type: 'LoadBalancer', selector: { app: name }, ports },
    });
  }
  async function events(name: string, reason: string): Promise<EventsV1Event[]> {
    const list = await env.api.list(kinds.EventsV1Event, { namespace: 'default' });
    return list.items.filter((e) => e.regarding?.name === name && e.reason === reason);
  }
  const journal = (since: number): RequestRecord[] => env.sim.cloud.stats.requests(since).requests;
  const octaviaWrites = (since: number) =>
    journal(since)
      .filter((r) => r.write && r.service === 'octavia')
      .map((r) => `${r.caller} ${r.operation}`);

  it("makes a Service's load balancer as the in-tree provider did: legacy names, one object per call, no tags, an undescribed floating IP", async () => {
    const since = env.sim.cloud.stats.requests().last;
    const svc = await service('web', [
      { name: 'http', protocol: 'TCP', port: 80 },
      { name: 'https', protocol: 'TCP', port: 443 },
    ]);
    const ready = await until(async () => {
      const s = await get('web');
      return s.status?.loadBalancer?.ingress?.[0]?.ip ? s : undefined;
    }, 'web has an address');
    assert.ok(ready.metadata?.finalizers?.includes(LOAD_BALANCER_FINALIZER));
    const lbName = `a${svc.metadata!.uid!.replaceAll('-', '')}`.slice(0, 32);
    const [lb, ...more] = await env.os.loadBalancer.loadBalancers.list({ name: lbName }).all();
    assert.ok(lb);
    assert.equal(more.length, 0);
    assert.equal(lb.description, `Kubernetes external service ${lbName}`);
    assert.deepEqual(lb.tags ?? [], []);
    const listeners = await env.os.loadBalancer.listeners.list({ loadbalancer_id: lb.id }).all();
    assert.deepEqual(listeners.map((l) => l.name).sort(), [`listener_${lbName}_0`, `listener_${lbName}_1`]);
    const pools = await env.os.loadBalancer.pools.list({ loadbalancer_id: lb.id }).all();
    assert.deepEqual(pools.map((p) => p.name).sort(), [`pool_${lbName}_0`, `pool_${lbName}_1`]);
    const pool0 = pools.find((p) => p.name.endsWith('_0'))!;
    const members = await env.os.loadBalancer.members.list(pool0.id).all();
    assert.deepEqual(members.map((m) => m.name).sort(), [
      `member_${lbName}_0_worker-1`,
      `member_${lbName}_0_worker-2`,
    ]);
    assert.ok(members.every((m) => m.subnet_id === net.subnet.id));
    const monitor = await env.os.loadBalancer.healthMonitors.get(pool0.healthmonitor_id!);
    assert.equal(monitor.name, `monitor_${lbName}_0`);
    assert.equal(monitor.type, 'TCP');
    const [fip] = await env.os.network.floatingIps.list({ port_id: lb.vip_port_id }).all();
    assert.equal(fip?.floating_ip_address, ready.status!.loadBalancer!.ingress![0]!.ip);
    assert.equal(fip?.floating_network_id, net.publicNetwork.id);
    assert.equal(fip?.description, '');

    // The in-tree provider's calls: the load balancer alone, then every listener, pool, member and
    // monitor its own POST; never a fully populated create or a batch member update.
    const writes = octaviaWrites(since);
    const count = (op: string) => writes.filter((w) => w === `${KCM_UA} ${op}`).length;
    assert.equal(count('POST /v2/lbaas/loadbalancers'), 1);
    assert.equal(count('POST /v2/lbaas/listeners'), 2);
    assert.equal(count('POST /v2/lbaas/pools'), 2);
    assert.equal(count('POST /v2/lbaas/pools/{pool_id}/members'), 4);
    assert.equal(count('POST /v2/lbaas/healthmonitors'), 2);
    assert.equal(writes.length, 11, writes.join('\n'));
  });

  it('adds and removes members one call each when the Nodes change', async () => {
    const since = env.sim.cloud.stats.requests().last;
    await registerInTreeNode(env, await bootServer(env, 'worker-3', net.network.id));
    await env.api.delete(kinds.Node, { name: 'worker-1' });
    const lbName = `a${(await get('web')).metadata!.uid!.replaceAll('-', '')}`.slice(0, 32);
    const [lb] = await env.os.loadBalancer.loadBalancers.list({ name: lbName }).all();
    await until(async () => {
      for (const pool of await env.os.loadBalancer.pools.list({ loadbalancer_id: lb!.id }).all()) {
        const names = (await env.os.loadBalancer.members.list(pool.id).all()).map((m) =>
          m.name.split('_').pop(),
        );
        if (names.sort().join() !== 'worker-2,worker-3') return false;
      }
      return true;
    }, 'members follow the Nodes');
    const writes = octaviaWrites(since);
    assert.deepEqual([...new Set(writes)].sort(), [
      `${KCM_UA} DELETE /v2/lbaas/pools/{pool_id}/members/{member_id}`,
      `${KCM_UA} POST /v2/lbaas/pools/{pool_id}/members`,
    ]);
    assert.equal(writes.length, 4, writes.join('\n'));
  });

  it("refuses a UDP port with the in-tree provider's error, as a SyncLoadBalancerFailed Event, and creates nothing", async () => {
    const svc = await service('dns', [{ protocol: 'UDP', port: 53 }]);
    const [warning] = await until(async () => {
      const found = await events('dns', 'SyncLoadBalancerFailed');
      return found.length > 0 ? found : undefined;
    }, 'the refusal Event');
    assert.equal(warning!.note, `Error syncing load balancer: failed to ensure load balancer: ${ONLY_TCP}`);
    const lbName = `a${svc.metadata!.uid!.replaceAll('-', '')}`.slice(0, 32);
    assert.deepEqual(await env.os.loadBalancer.loadBalancers.list({ name: lbName }).all(), []);
    await env.api.delete(kinds.Service, { namespace: 'default', name: 'dns' });
  });

  it('deletes the load balancer and its floating IP with the Service, then lets the Service go', async () => {
    const svc = await get('web');
    const address = svc.status!.loadBalancer!.ingress![0]!.ip!;
    await env.api.delete(kinds.Service, { namespace: 'default', name: 'web' });
    await until(async () => {
      try {
        await get('web');
        return false;
      } catch {
        return true;
      }
    }, 'web gone');
    const lbName = `a${svc.metadata!.uid!.replaceAll('-', '')}`.slice(0, 32);
    await until(
      async () => (await env.os.loadBalancer.loadBalancers.list({ name: lbName }).all()).length === 0,
      'the load balancer gone',
    );
    assert.deepEqual(await env.os.network.floatingIps.list({ floating_ip_address: address }).all(), []);
  });

  it('runs no cloud loop with --cloud-provider=external, only the ones --controllers keeps', async () => {
    await kcm.stop();
    const external = await startInTreeKcm(env, { cloudProvider: 'external', cloudConfig: conf });
    assert.deepEqual(external.kcm.controllers, []);
    await external.stop();

    kcm = await startInTreeKcm(env, { cloudConfig: conf, controllers: ['*', '-service'] });
    assert.deepEqual(kcm.kcm.controllers, ['cloud-node-lifecycle']);
    // No load balancer for a Service...
    await service('idle', [{ protocol: 'TCP', port: 80 }]);
    // ...while a Node whose server is gone (and whose kubelet went silent) is deleted.
    const node = await env.api.get(kinds.Node, { name: 'worker-2' });
    await env.api.patch(
      kinds.Node,
      { name: 'worker-2' },
      'merge',
      { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }] } },
      { subresource: 'status' },
    );
    await env.os.compute.servers.delete(node.spec!.providerID!.split('/').pop()!);
    await until(async () => {
      try {
        await env.api.get(kinds.Node, { name: 'worker-2' });
        return false;
      } catch {
        return true;
      }
    }, 'worker-2 deleted');
    const idle = await get('idle');
    assert.equal(idle.status?.loadBalancer?.ingress, undefined);
    assert.equal(idle.metadata?.finalizers, undefined);
    await env.api.delete(kinds.Service, { namespace: 'default', name: 'idle' });
    await kcm.stop();
  });

  it('hands the loops over on the KubeControllerManager: external stops them and sets CloudControllerOwner=False; openstack takes them back once the CCM operator lets go', async () => {
    await installHandshakeKinds(env);
    await env.api.create(KUBE_CONTROLLER_MANAGER, {
      apiVersion: 'operator.openshift.io/v1',
      kind: 'KubeControllerManager',
      metadata: { name: 'cluster' },
      spec: {},
    });
    kcm = await startInTreeKcm(env, { cloudConfig: conf });
    await service('shop', [{ protocol: 'TCP', port: 80 }]);
    await until(
      async () => (await get('shop')).status?.loadBalancer?.ingress?.[0]?.ip,
      'shop served in-tree',
    );
    const owner = async () =>
      (await env.api.get(KUBE_CONTROLLER_MANAGER, { name: 'cluster' })).status?.conditions?.find(
        (c) => c.type === CLOUD_CONTROLLER_OWNER,
      );

    // KCMO's decision: go external.
    await env.api.patch(KUBE_CONTROLLER_MANAGER, { name: 'cluster' }, 'merge', {
      metadata: { annotations: { [CLOUD_PROVIDER_ANNOTATION]: 'external' } },
    });
    const off = await until(async () => {
      const c = await owner();
      return c?.status === 'False' ? c : undefined;
    }, 'CloudControllerOwner=False');
    assert.equal(off.reason, 'ExternalCloudProvider');
    assert.equal(kcm.kcm.gate.open, false);
    // From now on the stand-in writes nothing, whatever changes.
    const since = env.sim.cloud.stats.requests().last;
    await service('later', [{ protocol: 'TCP', port: 80 }]);
    await env.api.patch(kinds.Service, { namespace: 'default', name: 'shop' }, 'merge', {
      spec: { ports: [{ protocol: 'TCP', port: 8080 }] },
    });
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(
      journal(since).filter((r) => r.write && r.caller === KCM_UA),
      [],
    );

    // Going back while the CCM operator still claims the loops: nothing moves.
    await env.api.create(CLUSTER_OPERATOR, {
      apiVersion: 'config.openshift.io/v1',
      kind: 'ClusterOperator',
      metadata: { name: 'cloud-controller-manager' },
    });
    const co = await env.api.get(CLUSTER_OPERATOR, { name: 'cloud-controller-manager' });
    await env.api.updateStatus(CLUSTER_OPERATOR, {
      ...co,
      status: {
        conditions: [
          {
            type: CLOUD_CONTROLLER_OWNER,
            status: 'True',
            reason: 'AsExpected',
            message: 'deployed',
            lastTransitionTime: new Date().toISOString(),
          },
        ],
      },
    });
    await env.api.patch(KUBE_CONTROLLER_MANAGER, { name: 'cluster' }, 'merge', {
      metadata: { annotations: { [CLOUD_PROVIDER_ANNOTATION]: 'openstack' } },
    });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await owner())?.status, 'False');
    assert.deepEqual(
      journal(since).filter((r) => r.write && r.caller === KCM_UA),
      [],
    );

    // The CCM operator lets go (its operands removed): the stand-in takes the loops back.
    await env.api.delete(CLUSTER_OPERATOR, { name: 'cloud-controller-manager' });
    await until(async () => (await owner())?.status === 'True', 'CloudControllerOwner=True');
    await until(
      async () => (await get('later')).status?.loadBalancer?.ingress?.[0]?.ip,
      'later served in-tree',
    );
    await until(async () => {
      const lbName = `a${(await get('shop')).metadata!.uid!.replaceAll('-', '')}`.slice(0, 32);
      const [lb] = await env.os.loadBalancer.loadBalancers.list({ name: lbName }).all();
      const listeners = await env.os.loadBalancer.listeners.list({ loadbalancer_id: lb!.id }).all();
      return listeners.map((l) => l.protocol_port).join() === '8080';
    }, 'shop moved to 8080');
    await kcm.stop();
  });
});
