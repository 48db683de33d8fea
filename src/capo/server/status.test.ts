/**
 * The engine's state through an OpenStackServer's status on the Kubernetes emulator with the CRDs
 * of deploy/capo/crds: the resolved and the recorded volumes survive the schema (an undeclared
 * field would be pruned); a status CAPO wrote (no volumes) gets a delete that derives no volume
 * name and says so in an Event; the subports a delete detached (`resources.subports`, ours) survive the schema,
 * and a restarted controller deletes their ports from that record alone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kinds } from '../../kube/index.ts';
import type { ServerState } from '../../openstack/services/server/index.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { capoKinds, SERVER_FINALIZER, type OpenStackServer } from '../api/index.ts';
import { startCapoEnv, type CapoEnv } from '../testing/env.ts';
import { openServerFixtures, type ServerFixtures } from '../testing/server-fixtures.ts';
import { stateFromStatus, statusFromState } from './status.ts';

const WAIT = { timeoutMs: 60_000, intervalMs: 25 };

describe('OpenStackServer status: the recorded state', () => {
  let env: CapoEnv;
  let fx: ServerFixtures;

  before(async () => {
    env = await startCapoEnv();
    fx = await openServerFixtures(env);
  });
  after(async () => {
    await env?.close();
  });

  /** Creates the object with our finalizer and writes `status` through the status subresource. */
  async function withStatus(name: string, status: OpenStackServer['status']): Promise<OpenStackServer> {
    const created = await env.api.create(capoKinds.OpenStackServer, {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
      kind: 'OpenStackServer',
      metadata: { name, namespace: env.namespace, finalizers: [SERVER_FINALIZER] },
      spec: fx.spec(),
    });
    return env.api.updateStatus(capoKinds.OpenStackServer, { ...created, status });
  }

  it('keeps resolved.volumes and resources.volumes through the CRD and reads them back', async () => {
    const state: ServerState = {
      resolved: {
        imageID: env.boot.imageId,
        flavorID: env.boot.flavorId,
        ports: [
          {
            name: 'vols-0',
            networkID: fx.network.id,
            tags: ['cluster-test'],
            trunk: false,
            fixedIPs: [],
            securityGroups: [],
          },
        ],
        volumes: [
          { name: 'vols-root', root: true, sizeGiB: 2, availabilityZone: 'nova' },
          { name: 'vols-etcd', root: false, sizeGiB: 1, type: 'fast', tag: 'etcd' },
        ],
      },
      resources: { ports: [{ id: 'a-port-id' }], volumes: [{ name: 'vols-root' }] },
    };
    const written = await withStatus('vols', { ready: false, ...statusFromState(state) });
    const read = stateFromStatus(written.status);
    assert.deepEqual(read.resolved?.volumes, state.resolved!.volumes);
    assert.deepEqual(read.resources, state.resources);

    const again = stateFromStatus((await fx.get('vols'))?.status);
    assert.deepEqual(again.resolved?.volumes, state.resolved!.volumes);
    assert.deepEqual(again.resources?.volumes, [{ name: 'vols-root' }]);
    await env.api.patch(capoKinds.OpenStackServer, { namespace: env.namespace, name: 'vols' }, 'merge', {
      metadata: { finalizers: null },
    });
    await fx.remove('vols');
  });

  it('a status CAPO wrote records no volumes: the delete derives no name, leaves the volume and names it in an Event', async () => {
    const baseline = await fx.census();
    const name = 'capo-written';
    const volume = await env.os.blockStorage.volumes.create({ size: 2, name: `${name}-root` });
    await eventually(async () => (await env.os.blockStorage.volumes.get(volume.id)).status === 'available', {
      ...WAIT,
      what: 'the root volume available',
    });
    const written = await withStatus(name, {
      ready: false,
      resolved: {
        imageID: env.boot.imageId,
        flavorID: env.boot.flavorId,
        ports: [{ name: `${name}-0`, description: '', networkID: fx.network.id }],
      },
    });
    assert.equal(stateFromStatus(written.status).resolved?.volumes, undefined);

    // Deleted before any controller runs: the first reconcile is the removal.
    await env.api.delete(capoKinds.OpenStackServer, { namespace: env.namespace, name });
    const capo = await env.startCapo({ controllers: ['openstackserver'] });
    try {
      await fx.remove(name);
    } finally {
      await capo.stop();
    }
    // Not recorded, so not ours to delete: the user is told which name to check.
    assert.equal((await env.os.blockStorage.volumes.get(volume.id)).status, 'available');
    const events = (await env.api.listAll(kinds.EventsV1Event, { namespace: env.namespace })).items;
    const told = events.find((e) => e.regarding?.name === name && e.reason === 'VolumesNotRecorded');
    assert.equal(told?.type, 'Warning');
    assert.match(told?.note ?? '', new RegExp(`volumes ${name}-root are not looked for`));
    await env.os.blockStorage.volumes.delete(volume.id);
    await eventually(async () => (await fx.census()).volumes === baseline.volumes, {
      ...WAIT,
      what: 'the volume deleted by hand',
    });
    assert.deepEqual(await fx.census(), baseline);
  });

  it('a delete killed after detaching the subports: the restarted controller deletes their ports from status', async () => {
    const baseline = await fx.census();
    const name = 'sub-detached';
    let capo = await env.startCapo({ controllers: ['openstackserver'] });
    let server: OpenStackServer;
    try {
      await fx.create(name);
      server = (await eventually(
        async () => {
          const s = await fx.get(name);
          return s?.status?.ready === true ? s : undefined;
        },
        { ...WAIT, what: `${name} Ready` },
      ))!;
    } finally {
      await capo.stop();
    }

    // Kuryr's pod ports on the machine's trunk; then what a delete killed right after the detach
    // leaves: the ports recorded in status, the trunk without them.
    const parent = server.status!.resources!.ports![1]!.id;
    const [trunk] = await env.os.network.trunks.list({ port_id: parent }).all();
    assert.ok(trunk);
    const pods = [
      await env.os.network.ports.create({ network_id: fx.podNetwork.id, name: `${name}-pod-a` }),
      await env.os.network.ports.create({ network_id: fx.podNetwork.id, name: `${name}-pod-b` }),
    ];
    await env.os.network.trunks.addSubports(
      trunk.id,
      pods.map((p, i) => ({ port_id: p.id, segmentation_type: 'vlan' as const, segmentation_id: 300 + i })),
    );
    const state = stateFromStatus(server.status);
    state.resources = { ...state.resources!, subports: pods.map((p) => ({ id: p.id })) };
    const written = await env.api.updateStatus(capoKinds.OpenStackServer, {
      ...server,
      status: { ...server.status, ...statusFromState(state) },
    });
    await env.os.network.trunks.removeSubports(
      trunk.id,
      pods.map((p) => ({ port_id: p.id })),
    );
    assert.deepEqual(
      stateFromStatus(written.status).resources?.subports,
      pods.map((p) => ({ id: p.id })),
      'status.resources.subports survives the CRD',
    );

    await env.api.delete(capoKinds.OpenStackServer, { namespace: env.namespace, name });
    capo = await env.startCapo({ controllers: ['openstackserver'] });
    try {
      await fx.remove(name);
    } finally {
      await capo.stop();
    }
    for (const p of pods) {
      const left = await env.os.network.ports.list({ id: p.id }).all();
      assert.deepEqual(left, [], `pod port ${p.name} deleted`);
    }
    assert.deepEqual(await fx.census(), baseline);
  });

  it('no subports left: the status has no subports field', () => {
    const state: ServerState = { resources: { ports: [{ id: 'p0' }], subports: [] } };
    assert.deepEqual(statusFromState(state), { resources: { ports: [{ id: 'p0' }] } });
    assert.deepEqual(stateFromStatus({ resources: { ports: [{ id: 'p0' }], subports: [] } }), {
      resources: { ports: [{ id: 'p0' }] },
    });
  });
});
