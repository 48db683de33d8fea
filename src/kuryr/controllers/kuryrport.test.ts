/**
 * The pod and kuryrport controllers on the kuryr test bed (both emulators over HTTP): pods on two
 * Nodes get KuryrPorts whose VIFs are subports of their Node's trunk with VLAN ids distinct per
 * trunk and addresses on the pod subnet; a pool hit; a pod's deletion returns its port to the pool;
 * the pools come back from the trunks after a restart; bad Nodes are reported on the pod; and a
 * Node deleted by CAPO with its trunk (subports deleted with it) is never fought over.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { isNotFound, kinds } from '../../kube/index.ts';
import { cidrContains, parseCidr, parseIp } from '../../lib/cidr.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { kuryrKinds, type KuryrPort } from '../api/index.ts';
import { Finalizers, Labels } from '../api/names.ts';
import { defaultVif, type Vif } from '../api/vif.ts';
import { startKuryrEnv, type KuryrEnv, type RunningKuryr } from '../testing/env.ts';
import { SUBPORT_DEVICE_OWNER } from '../vif/nested-vlan.ts';
import { vifStack } from '../vif/stack.ts';
import { PodEventReasons } from './kuryrport.ts';

const WAIT = { timeoutMs: 30_000, intervalMs: 20 };
const NS = 'pods';

describe('kuryr: pods on trunk subports through the pod and kuryrport controllers', () => {
  let env: KuryrEnv;
  let kuryr: RunningKuryr;

  before(async () => {
    env = await startKuryrEnv({ nodes: 2 });
    await env.ensureNamespace(NS);
    kuryr = await env.startKuryr({ controllers: ['pod', 'kuryrport'] });
  });
  after(async () => env?.close());

  function pod(name: string, node: string, extra: Partial<V1Pod['spec']> = {}): Promise<V1Pod> {
    return env.api.create(kinds.Pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS, labels: { app: 'demo' } },
      spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }], ...extra },
    });
  }
  async function kuryrPort(name: string): Promise<KuryrPort | undefined> {
    try {
      return await env.api.get(kuryrKinds.KuryrPort, { namespace: NS, name });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
  async function activeVif(name: string): Promise<Vif> {
    let vif: Vif | undefined;
    await eventually(
      async () => {
        vif = defaultVif((await kuryrPort(name))?.status?.vifs)?.vif;
        return vif?.active === true;
      },
      { ...WAIT, what: `KuryrPort ${name} active` },
    );
    return vif!;
  }
  const stack = () => vifStack(kuryr.manager, kuryr.ctx);

  it('gives pods on two nodes subports of their trunk: VLAN ids distinct per trunk, IPs on the pod subnet', async () => {
    const names = ['a-0', 'a-1', 'a-2', 'b-0', 'b-1', 'b-2'];
    for (const n of names) await pod(n, n.startsWith('a') ? 'worker-0' : 'worker-1');
    const vifs = new Map<string, Vif>();
    for (const n of names) vifs.set(n, await activeVif(n));
    const podNet = parseCidr(env.net.pods.cidr)!;
    for (const [i, worker] of env.workers.entries()) {
      const trunk = await env.os.network.trunks.get(worker.trunkId);
      const mine = names.filter((n) => n.startsWith(i === 0 ? 'a' : 'b')).map((n) => vifs.get(n)!);
      const ids = mine.map((v) => v.vlanId);
      assert.equal(new Set(ids).size, ids.length, `VLAN ids on ${worker.name}'s trunk are distinct`);
      for (const v of mine) {
        const sub = trunk.sub_ports.find((s) => s.port_id === v.id);
        assert.ok(sub, `port ${v.id} is a subport of ${worker.name}'s trunk`);
        assert.equal(sub.segmentation_id, v.vlanId);
        const port = await env.os.network.ports.get(v.id);
        assert.equal(port.device_owner, SUBPORT_DEVICE_OWNER);
        assert.equal(port.status, 'ACTIVE');
        assert.equal(v.address, port.mac_address);
        assert.deepEqual(port.security_groups, [env.net.podSecurityGroupId]);
        for (const t of kuryr.ctx.tags) assert.ok(port.tags.includes(t), `port carries ${t}`);
        const ip = v.network.subnets[0]!.ips[0]!;
        assert.ok(cidrContains(podNet, parseIp(ip)!), `${ip} in ${env.net.pods.cidr}`);
      }
    }
    const kp = (await kuryrPort('a-0'))!;
    const p = await env.api.get(kinds.Pod, { namespace: NS, name: 'a-0' });
    assert.equal(kp.metadata?.labels?.[Labels.KuryrPortNode], 'worker-0');
    assert.ok(kp.metadata?.finalizers?.includes(Finalizers.KuryrPort));
    assert.ok(p.metadata?.finalizers?.includes(Finalizers.Pod));
    assert.equal(kp.spec.podUid, p.metadata?.uid);
    assert.equal(kp.metadata?.ownerReferences?.[0]?.uid, p.metadata?.uid);
    const text = await kuryr.registry.getSingleMetricAsString('kuryr_pod_creation_latency');
    assert.match(text, new RegExp(`^kuryr_pod_creation_latency_count ${names.length}$`, 'm'));
  });

  it('serves a pod from the pool when it holds a port (a hit: the port existed before the pod)', async () => {
    await eventually(() => stack().pools.stats().available > 0, { ...WAIT, what: 'a pool refilled' });
    const before = stack().pools.availablePortIds();
    const trunks = new Map(env.workers.map((w) => [w.trunkId, w.name]));
    const port = await env.os.network.ports.get([...before][0]!);
    await pod('hit', trunks.get(port.device_id)!);
    const vif = await activeVif('hit');
    assert.ok(before.has(vif.id), 'the pod got a port the pool held');
  });

  it('leaves hostNetwork and unscheduled pods alone', async () => {
    await pod('host', 'worker-0', { hostNetwork: true });
    await env.api.create(kinds.Pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'pending', namespace: NS },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    await activeVif('hit'); // the controllers have been through both by now
    await pod('after', 'worker-0');
    await activeVif('after');
    assert.equal(await kuryrPort('host'), undefined);
    assert.equal(await kuryrPort('pending'), undefined);
  });

  it('reports a Node it cannot wire pods on: an Event on the pod naming the Node and the fix', async () => {
    await env.api.create(kinds.Node, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'bare-node' },
    });
    await pod('stranded', 'bare-node');
    await eventually(
      async () => {
        const events = (await env.api.list(kinds.Event, { namespace: NS })).items;
        return events.some(
          (e) =>
            e.involvedObject.name === 'stranded' &&
            e.reason === PodEventReasons.NodeTrunkMissing &&
            /bare-node/.test(e.message ?? '') &&
            /providerID/.test(e.message ?? ''),
        );
      },
      { ...WAIT, what: 'a Warning Event on the pod' },
    );
    assert.equal(defaultVif((await kuryrPort('stranded'))?.status?.vifs), undefined);
  });

  it('returns a deleted pod’s port to the pool and lets both objects go', async () => {
    const vif = await activeVif('b-2');
    await env.api.delete(kinds.Pod, { namespace: NS, name: 'b-2' });
    await eventually(async () => (await kuryrPort('b-2')) === undefined, { ...WAIT, what: 'KuryrPort gone' });
    await eventually(
      async () => {
        try {
          await env.api.get(kinds.Pod, { namespace: NS, name: 'b-2' });
          return false;
        } catch (err) {
          return isNotFound(err);
        }
      },
      { ...WAIT, what: 'pod gone' },
    );
    await eventually(() => stack().pools.availablePortIds().has(vif.id), {
      ...WAIT,
      what: 'port pooled',
    });
    const port = await env.os.network.ports.get(vif.id);
    assert.equal(port.device_owner, SUBPORT_DEVICE_OWNER, 'still a subport, ready for the next pod');
  });

  it('recovers the pools from the trunks after a restart: a pooled port serves the next pod', async () => {
    await eventually(() => stack().pools.stats().available > 0, WAIT);
    const pooled = stack().pools.availablePortIds();
    await kuryr.stop();
    kuryr = await env.startKuryr({ controllers: ['pod', 'kuryrport'] });
    await eventually(() => stack().pools.stats().available >= pooled.size, {
      ...WAIT,
      what: 'pools recovered',
    });
    for (const id of pooled) assert.ok(stack().pools.availablePortIds().has(id), `${id} pooled again`);
    const inUse = await env.os.network.ports.list({ tags: [...kuryr.ctx.tags] }).all();
    assert.ok(
      inUse.every((p) => p.device_owner === SUBPORT_DEVICE_OWNER),
      'nothing half made',
    );
  });

  it('never fights CAPO: a Node deleted with its trunk and subports gets nothing re-added', async () => {
    const worker = env.workers[1]!;
    const onNode = ['b-0', 'b-1'];
    for (const n of onNode) await activeVif(n);
    // CAPO's removal of the machine: the Node goes, then the trunk's subports are detached and deleted,
    // then the trunk. The pods on it are deleted by the pod GC.
    await env.api.delete(kinds.Node, { name: worker.name });
    const trunk = await env.os.network.trunks.get(worker.trunkId);
    await env.os.network.trunks.removeSubports(worker.trunkId, trunk.sub_ports);
    for (const s of trunk.sub_ports) await env.os.network.ports.delete(s.port_id);
    await env.os.network.trunks.delete(worker.trunkId);
    await pod('late', worker.name);
    for (const n of onNode) await env.api.delete(kinds.Pod, { namespace: NS, name: n });
    for (const n of onNode)
      await eventually(async () => (await kuryrPort(n)) === undefined, {
        ...WAIT,
        what: `${n}'s KuryrPort gone`,
      });
    // A pod scheduled on the gone Node gets no port, and no trunk gets one for it.
    await activeVif('a-0');
    assert.equal(defaultVif((await kuryrPort('late'))?.status?.vifs), undefined);
    const ours = await env.os.network.ports.list({ tags: [...kuryr.ctx.tags] }).all();
    for (const p of ours) {
      assert.equal(p.device_owner, SUBPORT_DEVICE_OWNER, `port ${p.id} is a subport`);
      assert.equal(p.device_id, env.workers[0]!.trunkId, `port ${p.id} is on the live Node's trunk`);
    }
  });
});
