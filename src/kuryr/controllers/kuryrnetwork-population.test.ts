/**
 * Prepopulation (the `kuryrnetwork_population` handler): a namespace's KuryrNetwork that has its
 * subnet gets each Node's pool filled to `ports_pool_min`, then `status.populated`; one that has
 * no subnet yet gets nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { kuryrKinds, type KuryrNetwork } from '../api/index.ts';
import { startKuryrEnv, type KuryrEnv } from '../testing/env.ts';
import { SUBPORT_DEVICE_OWNER } from '../vif/nested-vlan.ts';

const WAIT = { timeoutMs: 30_000, intervalMs: 20 };

describe('kuryr: port pools prepopulated per Node when a namespace network gets its subnet', () => {
  let env: KuryrEnv;
  before(async () => {
    env = await startKuryrEnv({ nodes: 2 });
  });
  after(async () => env?.close());

  function kuryrNetwork(ns: string, subnet: boolean): Promise<KuryrNetwork> {
    return env.api.create(kuryrKinds.KuryrNetwork, {
      apiVersion: kuryrKinds.KuryrNetwork.apiVersion,
      kind: kuryrKinds.KuryrNetwork.kind,
      metadata: { name: ns, namespace: ns },
      spec: { nsName: ns, projectId: env.projectId, nsLabels: {} },
      ...(subnet
        ? {
            status: {
              netId: env.net.pods.networkId,
              subnetId: env.net.pods.subnetId,
              subnetCIDR: env.net.pods.cidr,
            },
          }
        : {}),
    });
  }

  it('fills every Node’s pool to ports_pool_min, then marks the network populated', async () => {
    const kuryr = await env.startKuryr({
      controllers: ['kuryrnetwork-population'],
      options: { vifPool: { portsPoolMin: 4, portsPoolBatch: 3 } },
    });
    await env.ensureNamespace('waiting');
    await kuryrNetwork('waiting', false);
    await env.ensureNamespace('ready');
    await kuryrNetwork('ready', true);
    await eventually(
      async () =>
        (await env.api.get(kuryrKinds.KuryrNetwork, { namespace: 'ready', name: 'ready' })).status
          ?.populated === true,
      { ...WAIT, what: 'status.populated' },
    );
    for (const w of env.workers) {
      const trunk = await env.os.network.trunks.get(w.trunkId);
      assert.ok(trunk.sub_ports.length >= 4, `${w.name}'s trunk carries at least ports_pool_min subports`);
      for (const s of trunk.sub_ports) {
        const port = await env.os.network.ports.get(s.port_id);
        assert.equal(port.device_owner, SUBPORT_DEVICE_OWNER);
        assert.equal(port.network_id, env.net.pods.networkId);
      }
    }
    const waiting = await env.api.get(kuryrKinds.KuryrNetwork, { namespace: 'waiting', name: 'waiting' });
    assert.notEqual(waiting.status?.populated, true, 'no subnet yet: nothing to populate');
    await kuryr.stop();
  });
});
