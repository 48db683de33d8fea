/**
 * Kuryr end to end on both emulators, every controller in one process as `shiftstack kuryr
 * controller` runs them, with OpenShift's drivers (a subnet per namespace, security groups from
 * network policies): 50 pods on 3 nodes in 2 namespaces get subports of their node's trunk with VLAN
 * ids distinct per trunk and addresses in their namespace's subnet; a ClusterIP Service gets a load
 * balancer whose members follow its pods in batches; a NetworkPolicy gives a group with the right
 * rules on the right ports; and deleting everything leaves nothing of ours in the cloud.
 *
 * Kubernetes' own parts are stand-ins: the EndpointSlice controller of src/demo, and a kubelet that
 * reports each pod's IP from its VIF once it is active (what kubelet learns from the CNI result).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1NetworkPolicy, V1Pod } from '@kubernetes/client-node';
import { cidrContains, parseCidr, parseIp } from '../lib/cidr.ts';
import { createLogger } from '../lib/log.ts';
import { createRegistry } from '../lib/metrics.ts';
import { isNotFound, kinds, Manager } from '../kube/index.ts';
import { kubeConfigFrom } from '../kube/testing/env.ts';
import { registerEndpointSliceController } from '../demo/endpointslices.ts';
import { eventually } from '../sim/openstack/testing/harness.ts';
import {
  defaultVif,
  kuryrKinds,
  type KuryrLoadBalancer,
  type KuryrNetworkPolicy,
  type Vif,
} from './api/index.ts';
import { KURYR_CONTROLLERS, startKuryrEnv, type KuryrEnv, type RunningKuryr } from './testing/env.ts';

const WAIT = { timeoutMs: 180_000, intervalMs: 100 };
const NAMESPACES = ['shop', 'bank'] as const;
const PODS = 50;
const MEMBERS_PUT = 'PUT /v2/lbaas/pools/{pool_id}/members';

describe('kuryr end to end: 50 pods, 3 nodes, 2 namespaces, a Service and a NetworkPolicy', () => {
  let env: KuryrEnv;
  let kuryr: RunningKuryr;
  const standIns = new AbortController();
  let standInsDone: Promise<void> | undefined;

  before(async () => {
    env = await startKuryrEnv({ nodes: 3 });
    const pool = await env.os.network.subnetPools.create({
      name: 'kuryr-namespaces',
      prefixes: ['10.132.0.0/14'],
      default_prefixlen: 24,
    });
    for (const ns of NAMESPACES) await env.ensureNamespace(ns, { tenant: ns });
    kuryr = await env.startKuryr({
      controllers: Object.keys(KURYR_CONTROLLERS),
      options: {
        kubernetes: {
          podSubnetsDriver: 'namespace',
          podSecurityGroupsDriver: 'policy',
          serviceSecurityGroupsDriver: 'policy',
        },
        namespaceSubnet: { podSubnetPool: pool.id, podRouter: env.net.routerId },
        // A burst's events on a busy 2-core CI machine come up to a few hundred ms apart.
        octaviaDefaults: { memberBatchWindowMs: 500 },
      },
    });
    // What a cluster has beside kuryr: the EndpointSlice controller.
    const mgr = new Manager({
      name: 'stand-ins',
      kubeConfig: kubeConfigFrom(env.kube.kubeconfigPath),
      qps: 0,
      log: createLogger({ level: 'silent' }),
      registry: createRegistry({ defaultMetrics: false }),
      gracefulShutdownTimeoutMs: 2_000,
    });
    registerEndpointSliceController(mgr);
    standInsDone = mgr.start(standIns.signal);
  });
  after(async () => {
    standIns.abort(new Error('test done'));
    await standInsDone;
    await kuryr?.stop();
    await env?.close();
  });

  const podName = (i: number) => `${i % 3 === 0 ? 'db' : 'web'}-${i}`;
  const namespaceOf = (i: number) => NAMESPACES[i % 2]!;

  /** The kubelet's part: a pod whose VIF is active reports its address, Running and Ready. */
  async function kubeletPass(): Promise<number> {
    let running = 0;
    for (const ns of NAMESPACES) {
      const ports = await env.api.list(kuryrKinds.KuryrPort, { namespace: ns });
      for (const kp of ports.items) {
        const vif = defaultVif(kp.status?.vifs)?.vif;
        if (!vif?.active) continue;
        const ip = vif.network.subnets[0]?.ips[0];
        const name = kp.metadata?.name ?? '';
        const pod = await env.api.get(kinds.Pod, { namespace: ns, name }).catch(() => undefined);
        if (!pod || pod.metadata?.deletionTimestamp) continue;
        running++;
        if (pod.status?.podIP === ip) continue;
        await env.api.patch(
          kinds.Pod,
          { namespace: ns, name },
          'merge',
          {
            status: {
              phase: 'Running',
              podIP: ip,
              podIPs: [{ ip }],
              conditions: [{ type: 'Ready', status: 'True' }],
            },
          },
          { subresource: 'status' },
        );
      }
    }
    return running;
  }

  async function createPod(i: number): Promise<void> {
    const name = podName(i);
    const app = name.split('-')[0]!;
    await env.api.create(kinds.Pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: namespaceOf(i), labels: { app } },
      spec: {
        nodeName: env.workers[i % 3]!.name,
        containers: [
          {
            name: app,
            image: app,
            ports: [{ name: app === 'db' ? 'sql' : 'http', containerPort: app === 'db' ? 5432 : 8080 }],
          },
        ],
      },
    } satisfies V1Pod);
  }

  async function vifs(): Promise<Map<string, { ns: string; node: string; vif: Vif }>> {
    const out = new Map<string, { ns: string; node: string; vif: Vif }>();
    for (const ns of NAMESPACES) {
      for (const kp of (await env.api.list(kuryrKinds.KuryrPort, { namespace: ns })).items) {
        const vif = defaultVif(kp.status?.vifs)?.vif;
        if (vif) out.set(`${ns}/${kp.metadata?.name}`, { ns, node: kp.spec.podNodeName, vif });
      }
    }
    return out;
  }

  it('wires 50 pods onto their nodes’ trunks, VLAN ids distinct per trunk, addresses in their namespace subnet', async () => {
    await Promise.all(Array.from({ length: PODS }, (_, i) => createPod(i)));
    await eventually(async () => (await kubeletPass()) === PODS, { ...WAIT, what: `${PODS} pods running` });

    const wired = await vifs();
    assert.equal(wired.size, PODS);
    const cidrs = new Map<string, string>();
    for (const ns of NAMESPACES) {
      const kns = await env.api.get(kuryrKinds.KuryrNetwork, { namespace: ns, name: ns });
      assert.ok(kns.status?.subnetCIDR, `${ns}: KuryrNetwork ${JSON.stringify(kns.status)}`);
      cidrs.set(ns, kns.status.subnetCIDR);
    }
    assert.notEqual(cidrs.get('shop'), cidrs.get('bank'));
    for (const [key, { ns, vif }] of wired) {
      const ip = vif.network.subnets[0]?.ips[0] ?? '';
      assert.ok(cidrContains(parseCidr(cidrs.get(ns)!)!, parseIp(ip)!), `${key}: ${ip} in ${cidrs.get(ns)}`);
      assert.equal(vif.active, true, key);
      assert.ok(
        vif.vlanId !== undefined && vif.vlanId >= 1 && vif.vlanId <= 4094,
        `${key}: vlan ${vif.vlanId}`,
      );
    }
    for (const worker of env.workers) {
      const subports = await env.os.network.trunks.getSubports(worker.trunkId);
      const byPort = new Map(subports.map((s) => [s.port_id, s.segmentation_id]));
      const ids = subports.map((s) => s.segmentation_id);
      assert.equal(new Set(ids).size, ids.length, `${worker.name}: VLAN ids used twice: ${ids.join(',')}`);
      const mine = [...wired.values()].filter((w) => w.node === worker.name);
      assert.ok(mine.length >= 16, `${worker.name} runs ${mine.length} pods`);
      for (const { vif } of mine) {
        assert.equal(
          byPort.get(vif.id),
          vif.vlanId,
          `${worker.name}: port ${vif.id} is a subport with the VIF's VLAN id`,
        );
      }
    }
  });

  it('gives a ClusterIP Service a load balancer whose members follow its pods, in batches', async () => {
    await env.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    });
    const service = await env.api.get(kinds.Service, { namespace: 'shop', name: 'web' });
    const podIps = async () => {
      const pods = await env.api.list(kinds.Pod, { namespace: 'shop', labelSelector: 'app=web' });
      return pods.items
        .filter((p) => p.status?.podIP && !p.metadata?.deletionTimestamp)
        .map((p) => `${p.status!.podIP}:8080`)
        .sort();
    };
    const members = async (): Promise<string[] | undefined> => {
      const klb = await env.api
        .get<KuryrLoadBalancer>(kuryrKinds.KuryrLoadBalancer, { namespace: 'shop', name: 'web' })
        .catch(() => undefined);
      const lbId = klb?.status?.loadbalancer?.id;
      if (!lbId) return undefined;
      const lb = await env.os.loadBalancer.loadBalancers.get(lbId);
      if (lb.provisioning_status !== 'ACTIVE') return undefined;
      const pools = await env.os.loadBalancer.pools.list({ loadbalancer_id: lbId }).all();
      if (pools.length !== 1) return undefined;
      return (await env.os.loadBalancer.members.list(pools[0]!.id).all())
        .map((m) => `${m.address}:${m.protocol_port}`)
        .sort();
    };
    const expected = await podIps();
    assert.equal(expected.length, 16);
    await eventually(async () => JSON.stringify(await members()) === JSON.stringify(expected), {
      ...WAIT,
      what: 'the load balancer with the web pods as members',
    });
    const klb = await env.api.get<KuryrLoadBalancer>(kuryrKinds.KuryrLoadBalancer, {
      namespace: 'shop',
      name: 'web',
    });
    assert.equal(klb.status?.loadbalancer?.ip, service.spec?.clusterIP, 'the VIP is the ClusterIP');

    // A burst: six web pods go at once. Their members leave in a batch per pool, not one call each.
    const since = env.sim.cloud.stats.requests().last;
    const shopWeb = Array.from({ length: PODS }, (_, i) => i).filter(
      (i) => namespaceOf(i) === 'shop' && podName(i).startsWith('web'),
    );
    await Promise.all(
      shopWeb.slice(0, 6).map((i) => env.api.delete(kinds.Pod, { namespace: 'shop', name: podName(i) })),
    );
    await eventually(
      async () => {
        const want = await podIps();
        return want.length === 10 && JSON.stringify(await members()) === JSON.stringify(want);
      },
      { ...WAIT, what: 'the members without the six deleted pods' },
    );
    const writes = env.sim.cloud.stats
      .requests(since, { service: 'octavia', writes: true })
      .requests.map((r) => r.operation);
    // The endpointslice controller gathers the burst (its coalescing window) into one spec write.
    assert.deepEqual(writes, [MEMBERS_PUT], 'six members out in one batch');
  });

  it('makes a NetworkPolicy one security group with the right rules, on the ports of the pods it selects', async () => {
    // The wire's `from` (client-node's model names it `_from`).
    const policy = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'db-from-shop', namespace: 'bank' },
      spec: {
        podSelector: { matchLabels: { app: 'db' } },
        policyTypes: ['Ingress'],
        ingress: [
          {
            from: [{ namespaceSelector: { matchLabels: { tenant: 'shop' } } }],
            ports: [{ protocol: 'TCP', port: 'sql' }],
          },
        ],
      },
    } as unknown as V1NetworkPolicy;
    await env.api.create(kinds.NetworkPolicy, policy);
    const sgId: string = await eventually(
      async () => {
        const knp = await env.api
          .get<KuryrNetworkPolicy>(kuryrKinds.KuryrNetworkPolicy, { namespace: 'bank', name: 'db-from-shop' })
          .catch(() => undefined);
        return knp?.status?.securityGroupId || undefined;
      },
      { ...WAIT, what: 'the policy’s security group' },
    ).then((id) => id!);
    const shopCidr = (await env.api.get(kuryrKinds.KuryrNetwork, { namespace: 'shop', name: 'shop' })).status
      ?.subnetCIDR;
    await eventually(
      async () => {
        const rules = await env.os.network.securityGroupRules.list({ security_group_id: sgId }).all();
        return rules.some(
          (r) =>
            r.direction === 'ingress' &&
            r.protocol === 'tcp' &&
            r.port_range_min === 5432 &&
            r.port_range_max === 5432 &&
            r.remote_ip_prefix === shopCidr,
        );
      },
      { ...WAIT, what: `an ingress rule tcp/5432 from ${shopCidr}` },
    );
    const wired = await vifs();
    await eventually(
      async () => {
        for (const [key, { vif }] of wired) {
          if (!key.startsWith('bank/')) continue;
          const port = await env.os.network.ports.get(vif.id);
          const selected = key.startsWith('bank/db-');
          if (port.security_groups.includes(sgId) !== selected) return false;
        }
        return true;
      },
      { ...WAIT, what: 'the group on the bank db pods’ ports and on no other' },
    );
  });

  it('leaves nothing of ours in the cloud once everything is deleted', async () => {
    const tags = [...kuryr.ctx.tags];
    await env.api.delete(kinds.NetworkPolicy, { namespace: 'bank', name: 'db-from-shop' });
    await env.api.delete(kinds.Service, { namespace: 'shop', name: 'web' });
    for (const ns of NAMESPACES) await env.api.delete(kinds.Namespace, { name: ns });
    await eventually(
      async () => {
        for (const ns of NAMESPACES) {
          try {
            await env.api.get(kinds.Namespace, { name: ns });
            return false;
          } catch (err) {
            if (!isNotFound(err)) throw err;
          }
        }
        return true;
      },
      {
        ...WAIT,
        what: 'both namespaces gone (their pods, KuryrPorts, KuryrNetworks, Services and policies with them)',
      },
    );
    await eventually(
      async () => {
        const left = {
          ports: await env.admin.network.ports.list({ tags }).all(),
          networks: await env.admin.network.networks.list({ tags }).all(),
          subnets: await env.admin.network.subnets.list({ tags }).all(),
          groups: await env.admin.network.securityGroups.list({ tags }).all(),
          loadBalancers: (await env.admin.loadBalancer.loadBalancers.list().all()).filter((lb) =>
            (lb.name ?? '').startsWith('shop/'),
          ),
          subports: (
            await Promise.all(env.workers.map((w) => env.os.network.trunks.getSubports(w.trunkId)))
          ).flat(),
        };
        const count = Object.values(left).reduce((n, l) => n + l.length, 0);
        return count === 0 ? true : undefined;
      },
      { ...WAIT, what: 'no port, network, subnet, group, load balancer or subport of ours left' },
    );
  });
});
