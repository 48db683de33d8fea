import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EventsV1Event } from '@kubernetes/client-node';
import { isNotFound, kinds } from '../../kube/index.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { TAINT_SHUTDOWN } from '../node-spec.ts';
import { startCcmEnv, type CcmEnv, type RunningCcm } from '../testing/env.ts';

const wait = { timeoutMs: 15_000, intervalMs: 20 };

describe('cloud-node-lifecycle controller (end to end: kube and OpenStack emulators)', () => {
  let env: CcmEnv;
  let ccm: RunningCcm;
  let networkId: string;
  before(async () => {
    env = await startCcmEnv();
    const net = await env.os.network.networks.create({ name: 'lc-nodes' });
    await env.os.network.subnets.create({ network_id: net.id, cidr: '10.40.0.0/24', ip_version: 4 });
    networkId = net.id;
    ccm = await env.startCcm({ nodeMonitorPeriodMs: 50 });
  });
  after(async () => {
    await ccm?.stop();
    await env?.close();
  });

  /** An initialized Node whose kubelet stopped reporting: Ready=False. */
  async function notReadyNode(name: string): Promise<string> {
    const created = await env.os.compute.servers.create({
      name,
      flavorRef: env.boot.flavorId,
      imageRef: env.boot.imageId,
      networks: [{ uuid: networkId }],
    });
    await env.os.compute.servers.waitForActive(created.id, { intervalMs: 20, timeoutMs: 10_000 });
    await env.api.create(kinds.Node, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      spec: { providerID: `openstack:///${created.id}` },
    });
    await env.api.patch(
      kinds.Node,
      { name },
      'merge',
      { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }] } },
      { subresource: 'status' },
    );
    return created.id;
  }

  const taints = async (name: string) => (await env.api.get(kinds.Node, { name })).spec?.taints ?? [];

  it('taints a Node whose server is SHUTOFF, and removes the taint once it runs again', async () => {
    const id = await notReadyNode('lc-stop');
    await env.os.compute.servers.stop(id);
    await eventually(async () => (await taints('lc-stop')).some((t) => t.key === TAINT_SHUTDOWN), {
      ...wait,
      what: 'shutdown taint',
    });
    assert.deepEqual(await taints('lc-stop'), [{ key: TAINT_SHUTDOWN, effect: 'NoSchedule' }]);

    await env.os.compute.servers.start(id);
    await eventually(async () => (await taints('lc-stop')).length === 0, { ...wait, what: 'taint removed' });
  });

  it('deletes a Node whose server is gone, with the upstream Events', async () => {
    const id = await notReadyNode('lc-gone');
    await env.os.compute.servers.delete(id);
    await eventually(
      async () => {
        try {
          await env.api.get(kinds.Node, { name: 'lc-gone' });
          return false;
        } catch (err) {
          if (isNotFound(err)) return true;
          throw err;
        }
      },
      { ...wait, what: 'node deleted' },
    );
    const events = await eventually(
      async () => {
        const all = (await env.api.listAll(kinds.EventsV1Event, { namespace: 'default' })).items;
        const mine = all.filter((e: EventsV1Event) => e.regarding?.name === 'lc-gone');
        return mine.some((e) => e.reason === 'RemovingNode') ? mine : undefined;
      },
      { ...wait, what: 'events' },
    );
    const deleting = events!.find((e) => e.reason === 'DeletingNode');
    assert.equal(deleting?.note, 'Deleting node lc-gone because it does not exist in the cloud provider');
    assert.equal(
      events!.find((e) => e.reason === 'RemovingNode')?.note,
      'Removing Node lc-gone from Controller',
    );
  });

  it('leaves a Ready Node alone and clears a stale shutdown taint', async () => {
    // Created Ready in one request, as kubelet registers: no moment where it looks NotReady.
    await env.api.create(kinds.Node, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'lc-ready' },
      spec: {
        providerID: 'openstack:///no-such-server',
        taints: [{ key: TAINT_SHUTDOWN, effect: 'NoSchedule' }],
      },
      status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] },
    });
    await eventually(async () => (await taints('lc-ready')).length === 0, { ...wait, what: 'taint removed' });
    // Ready: the server is not even looked up, so its absence deletes nothing.
    assert.ok(await env.api.get(kinds.Node, { name: 'lc-ready' }));
  });
});
