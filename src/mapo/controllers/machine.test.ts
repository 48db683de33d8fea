/**
 * The machine controller end to end on the emulators: Machines from the installer's worker
 * MachineSet (examples/mapo/machineset.yaml) go through an OpenStackServer, which capo's
 * OpenStackServer controller turns into a Nova server, in the same process.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { capoKinds } from '../../capo/api/index.ts';
import { kinds } from '../../kube/index.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { Annotations, Labels, MACHINE_FINALIZER, mapoKinds, type Machine } from '../api/index.ts';
import {
  API_VIP,
  INGRESS_VIP,
  MAPI_NAMESPACE,
  startMapoEnv,
  type MapoEnv,
  type RunningMapo,
} from '../testing/env.ts';

const WAIT = { timeoutMs: 30_000 };

describe('machine controller (MAPO on OpenStackServer)', () => {
  let env: MapoEnv;
  let mapo: RunningMapo;

  before(async () => {
    env = await startMapoEnv();
    mapo = await env.startMapo();
  });
  after(async () => {
    await mapo?.stop();
    await env?.close();
  });

  const get = (name: string) => env.api.get(mapoKinds.Machine, { namespace: MAPI_NAMESPACE, name });
  const machineWhen = async (name: string, what: string, ok: (m: Machine) => boolean): Promise<Machine> => {
    let found: Machine | undefined;
    await eventually(
      async () => {
        const m = await get(name);
        if (ok(m)) found = m;
        return found !== undefined;
      },
      { ...WAIT, what: `Machine ${name}: ${what}` },
    );
    return found!;
  };
  const serversNamed = async (name: string) =>
    (await env.admin.compute.servers.list({ name: `^${name}$`, all_tenants: true }).all()).filter(
      (s) => s.name === name,
    );

  it('a worker of the installer’s MachineSet reaches Provisioned, then Running with a nodeRef', async () => {
    const name = 'ostest-7xk2p-worker-0-aaaaa';
    await env.api.create(mapoKinds.Machine, env.machineFrom(name));
    const m = await machineWhen(
      name,
      'Provisioned, ACTIVE, with addresses',
      (x) =>
        x.status?.phase === 'Provisioned' &&
        x.metadata?.annotations?.[Annotations.InstanceState] === 'ACTIVE' &&
        (x.status.addresses?.length ?? 0) > 0,
    );

    const [server] = await serversNamed(name);
    assert.ok(server, 'one Nova server of the Machine’s name');
    assert.equal(m.spec?.providerID, `openstack:///${server.id}`);
    assert.ok(m.metadata?.finalizers?.includes(MACHINE_FINALIZER));
    assert.equal(m.metadata?.annotations?.[Annotations.ResourceID], server.id);
    assert.equal(m.metadata?.annotations?.[Annotations.InstanceState], 'ACTIVE');
    assert.equal(m.metadata?.labels?.[Labels.InstanceType], 'm1.xlarge');
    assert.equal(m.metadata?.labels?.[Labels.Region], env.sim.cloud.options.region);
    assert.ok(m.metadata?.labels?.[Labels.Zone], 'the zone Nova placed it in');
    const addresses = m.status?.addresses ?? [];
    assert.ok(addresses.some((a) => a.type === 'InternalIP' && a.address.startsWith('10.0.')));
    assert.deepEqual(
      addresses.filter((a) => a.type === 'Hostname' || a.type === 'InternalDNS'),
      [
        { type: 'Hostname', address: name },
        { type: 'InternalDNS', address: name },
      ],
    );
    const ps = m.status?.providerStatus as Record<string, any>;
    assert.equal(ps.kind, 'OpenstackProviderStatus');
    assert.equal(ps.instanceId, server.id);
    assert.equal(ps.instanceState, 'ACTIVE');
    assert.ok(ps.resolved.imageID && ps.resolved.flavorID && ps.resolved.serverGroupID);
    assert.equal(ps.ports.length, 1);
    assert.equal(ps.ports[0].networkID, env.nodes.networkId, 'the network of the subnet the filter found');
    assert.equal(
      m.status?.conditions?.find((c) => c.type === 'InstanceExists')?.status,
      'True',
      JSON.stringify(m.status?.conditions),
    );

    // The VIPs as allowed address pairs; tags; the OpenStackServer owned by the Machine.
    const port = await env.os.network.ports.get(ps.ports[0].id as string);
    assert.deepEqual(
      port.allowed_address_pairs.map((p) => p.ip_address),
      [API_VIP, INGRESS_VIP],
    );
    assert.deepEqual(
      port.fixed_ips.map((f) => f.subnet_id),
      [env.nodes.subnetId],
    );
    const oss = await env.api.get(capoKinds.OpenStackServer, { namespace: MAPI_NAMESPACE, name });
    const owner = oss.metadata?.ownerReferences?.[0];
    assert.equal(owner?.kind, 'Machine');
    assert.equal(owner?.controller, true);
    assert.ok(oss.spec.tags?.includes('openshift-machine-api-ostest-7xk2p'));
    const userData = await env.api.get(kinds.Secret, {
      namespace: MAPI_NAMESPACE,
      name: `${name}-user-data`,
    });
    assert.equal(userData.metadata?.ownerReferences?.[0]?.name, name);
    assert.ok(userData.data?.value);

    // nodelink's part, played by the test.
    const node = await env.api.create<V1Node>(kinds.Node, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
    });
    await env.api.patch(
      mapoKinds.Machine,
      { namespace: MAPI_NAMESPACE, name },
      'merge',
      { status: { nodeRef: { kind: 'Node', name, uid: node.metadata?.uid } } },
      { subresource: 'status' },
    );
    await machineWhen(name, 'Running', (x) => x.status?.phase === 'Running');
  });

  it('a bad flavor: Failed with the field and value named, and no OpenStack write', async () => {
    const name = 'ostest-7xk2p-worker-0-bbbbb';
    const since = env.sim.cloud.stats.requests().last;
    await env.api.create(
      mapoKinds.Machine,
      env.machineFrom(name, (v) => {
        v.flavor = 'm9.nonexistent';
      }),
    );
    const m = await machineWhen(name, 'Failed', (x) => x.status?.phase === 'Failed');
    assert.equal(m.status?.errorReason, 'InvalidConfiguration');
    assert.match(
      m.status?.errorMessage ?? '',
      /spec\.providerSpec\.value\.flavor: flavor "m9\.nonexistent" does not exist/,
    );
    const writes = env.sim.cloud.stats
      .requests(since, { writes: true })
      .requests.filter((r) => r.service !== 'keystone');
    assert.deepEqual(
      writes.map((r) => `${r.service} ${r.operation}`),
      [],
    );
    await assert.rejects(
      env.api.get(capoKinds.OpenStackServer, { namespace: MAPI_NAMESPACE, name }),
      /not ?found/i,
    );
  });

  it('a server group by name is created once for three Machines created together', async () => {
    const group = 'ostest-7xk2p-concurrent';
    const names = ['c1', 'c2', 'c3'].map((s) => `ostest-7xk2p-worker-0-${s}xxx`);
    await Promise.all(
      names.map((n) =>
        env.api.create(
          mapoKinds.Machine,
          env.machineFrom(n, (v) => {
            v.serverGroupName = group;
          }),
        ),
      ),
    );
    for (const n of names) await machineWhen(n, 'Provisioned', (x) => x.status?.phase === 'Provisioned');
    const groups = (await env.os.compute.serverGroups.list()).filter((g) => g.name === group);
    assert.equal(groups.length, 1, JSON.stringify(groups));
    for (const n of names) {
      const m = await get(n);
      assert.equal((m.status?.providerStatus as Record<string, any>).resolved.serverGroupID, groups[0]!.id);
    }
  });

  it('a preTerminate hook holds the delete; then server, ports, volumes, Node and finalizer go', async () => {
    const name = 'ostest-7xk2p-worker-0-ddddd';
    const machine = env.machineFrom(name, (v) => {
      v.image = undefined;
      v.rootVolume = { sourceUUID: 'ostest-7xk2p-rhcos', diskSize: 1 };
    });
    machine.spec!.lifecycleHooks = { preTerminate: [{ name: 'HoldIt', owner: 'test' }] };
    machine.metadata!.annotations = { [Annotations.ExcludeNodeDraining]: '' };
    await env.api.create(mapoKinds.Machine, machine);
    const m = await machineWhen(name, 'Provisioned', (x) => x.status?.phase === 'Provisioned');
    const ps = m.status?.providerStatus as Record<string, any>;
    const portIds = (ps.ports as { id: string }[]).map((p) => p.id);
    const [server] = await serversNamed(name);
    assert.ok(server);
    assert.equal((await env.os.blockStorage.volumes.list({ name: `${name}-root` }).all()).length, 1);
    const node = await env.api.create<V1Node>(kinds.Node, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
    });
    await env.api.patch(
      mapoKinds.Machine,
      { namespace: MAPI_NAMESPACE, name },
      'merge',
      { status: { nodeRef: { kind: 'Node', name, uid: node.metadata?.uid } } },
      { subresource: 'status' },
    );

    await env.api.delete(mapoKinds.Machine, { namespace: MAPI_NAMESPACE, name });
    await machineWhen(name, 'Deleting', (x) => x.status?.phase === 'Deleting');
    // Held: the OpenStackServer stays while the hook is there.
    const held = await env.api.get(capoKinds.OpenStackServer, { namespace: MAPI_NAMESPACE, name });
    assert.equal(held.metadata?.deletionTimestamp, undefined);
    assert.equal((await serversNamed(name)).length, 1);

    await env.api.patch(mapoKinds.Machine, { namespace: MAPI_NAMESPACE, name }, 'json', [
      { op: 'remove', path: '/spec/lifecycleHooks/preTerminate' },
    ]);
    await eventually(
      async () => {
        try {
          await get(name);
          return false;
        } catch {
          return true;
        }
      },
      { ...WAIT, what: `Machine ${name} gone` },
    );
    assert.deepEqual(await serversNamed(name), []);
    for (const id of portIds) {
      assert.equal((await env.os.network.ports.list({ id }).all()).length, 0, `port ${id} deleted`);
    }
    assert.equal((await env.os.blockStorage.volumes.list({ name: `${name}-root` }).all()).length, 0);
    await assert.rejects(env.api.get(kinds.Node, { name }), /not ?found/i);
  });
});
