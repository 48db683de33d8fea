/**
 * nodelink through the Kubernetes emulator: a Machine and its Node found by providerID, or by
 * InternalIP when the Node has none; the Machine's nodeRef, the Node's machine annotation, labels
 * and taints, with what the Node already carries kept.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kinds } from '../../kube/index.ts';
import { eventually } from '../../sim/kube/testing/harness.ts';
import { Annotations, MACHINE_API_NAMESPACE, mapoKinds } from '../api/index.ts';
import { machineBody, startMaoEnv, type MaoEnv } from './testing/env.ts';

const NS = MACHINE_API_NAMESPACE;
const WAIT = { timeoutMs: 20_000, intervalMs: 20 };

describe('nodelink (acting as the machine-api-operator)', () => {
  let env: MaoEnv;

  before(async () => {
    env = await startMaoEnv();
    await env.start();
  });
  after(async () => {
    await env?.close();
  });

  it('links by providerID: nodeRef on the Machine; annotation, labels and taints on the Node, keeping its own', async () => {
    const m = machineBody('by-id', 'none');
    m.spec = {
      ...m.spec,
      providerID: 'openstack:///0b2a6f0e-0000-4000-8000-000000000001',
      metadata: { labels: { 'node-role.kubernetes.io/worker': '', tier: 'gold' } },
      taints: [
        { key: 'dedicated', value: 'gold', effect: 'NoSchedule' },
        { key: 'already', value: 'machine', effect: 'NoExecute' },
      ],
    };
    await env.api.create(mapoKinds.Machine, m);
    const node = await env.api.create(kinds.Node, {
      metadata: { name: 'by-id-node', labels: { own: 'label', tier: 'silver' } },
      spec: {
        providerID: 'openstack:///0b2a6f0e-0000-4000-8000-000000000001',
        taints: [{ key: 'already', value: 'node', effect: 'NoExecute' }],
      },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });

    const linked = await eventually(async () => {
      const got = await env.api.get(mapoKinds.Machine, { namespace: NS, name: 'by-id' });
      return got.status?.nodeRef ? got : undefined;
    }, WAIT);
    assert.deepEqual(linked.status?.nodeRef, { kind: 'Node', name: 'by-id-node', uid: node.metadata?.uid });
    assert.ok(linked.status?.lastUpdated);

    const n = await eventually(async () => {
      const got = await env.api.get(kinds.Node, { name: 'by-id-node' });
      return got.metadata?.annotations?.[Annotations.Machine] ? got : undefined;
    }, WAIT);
    assert.equal(n.metadata?.annotations?.[Annotations.Machine], `${NS}/by-id`);
    assert.equal(n.metadata?.labels?.own, 'label', 'a label of its own stays');
    assert.equal(n.metadata?.labels?.tier, 'gold', 'the Machine’s label value wins, as upstream');
    assert.equal(n.metadata?.labels?.['node-role.kubernetes.io/worker'], '');
    assert.deepEqual(
      n.spec?.taints?.map((t) => [t.key, t.value, t.effect]),
      [
        ['already', 'node', 'NoExecute'],
        ['dedicated', 'gold', 'NoSchedule'],
      ],
      'a taint of the same key and effect is not added again; the Node’s own is kept',
    );

    // A label added to the Machine later reaches the Node; one removed from it stays there.
    await env.api.patch(mapoKinds.Machine, { namespace: NS, name: 'by-id' }, 'merge', {
      spec: { metadata: { labels: { 'node-role.kubernetes.io/worker': '', extra: 'yes' } } },
    });
    const later = await eventually(async () => {
      const got = await env.api.get(kinds.Node, { name: 'by-id-node' });
      return got.metadata?.labels?.extra === 'yes' ? got : undefined;
    }, WAIT);
    assert.equal(later.metadata?.labels?.tier, 'gold', 'nodelink never removes what it added');
  });

  it('links by InternalIP when the Node has no providerID', async () => {
    await env.api.create(mapoKinds.Machine, machineBody('by-ip', 'none'));
    await env.api.patch(
      mapoKinds.Machine,
      { namespace: NS, name: 'by-ip' },
      'merge',
      {
        status: {
          addresses: [
            { type: 'InternalIP', address: '10.0.0.42' },
            { type: 'Hostname', address: 'by-ip' },
          ],
        },
      },
      { subresource: 'status' },
    );
    const node = await env.api.create(kinds.Node, {
      metadata: { name: 'by-ip-node' },
      status: {
        addresses: [{ type: 'InternalIP', address: '10.0.0.42' }],
        conditions: [{ type: 'Ready', status: 'False' }],
      },
    });
    const linked = await eventually(async () => {
      const got = await env.api.get(mapoKinds.Machine, { namespace: NS, name: 'by-ip' });
      return got.status?.nodeRef ? got : undefined;
    }, WAIT);
    assert.deepEqual(linked.status?.nodeRef, { kind: 'Node', name: 'by-ip-node', uid: node.metadata?.uid });
    await eventually(
      async () =>
        (await env.api.get(kinds.Node, { name: 'by-ip-node' })).metadata?.annotations?.[
          Annotations.Machine
        ] === `${NS}/by-ip`,
      WAIT,
    );
  });
});
