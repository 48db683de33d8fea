import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kinds } from '../kube/index.ts';
import { eventually } from '../sim/openstack/testing/harness.ts';
import { Annotation } from './service/annotations.ts';
import { startCcmEnv, type CcmEnv } from './testing/env.ts';

describe('shiftstack ccm with its config in a Secret', () => {
  let env: CcmEnv;
  before(async () => (env = await startCcmEnv()));
  after(async () => env?.close());

  it('authenticates with the Secret’s credentials, not the file’s', async () => {
    const global = (password: string) =>
      `[Global]\nauth-url = ${env.sim.authUrl}\nusername = demo\npassword = ${password}\ntenant-name = demo\n` +
      `user-domain-name = Default\ntenant-domain-name = Default\nregion = RegionOne\n`;
    await env.api.create(kinds.Secret, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'cloud-config', namespace: 'kube-system' },
      stringData: { 'cloud.conf': global('secret') },
    });
    // The file's password is wrong: only the Secret can make the CCM work.
    const file = join(env.dir, 'with-secret.conf');
    await writeFile(file, `${global('wrong')}secret-name = cloud-config\nsecret-namespace = kube-system\n`);

    const server = await env.os.compute.servers.create({
      name: 'worker-s',
      flavorRef: env.boot.flavorId,
      imageRef: env.boot.imageId,
      networks: 'none',
    });
    await env.os.compute.servers.waitForActive(server.id, { intervalMs: 20, timeoutMs: 10_000 });

    const ccm = await env.startCcm({ cloudConfig: file, controllers: ['cloud-node'] });
    try {
      await env.createNode('worker-s');
      const node = await eventually(
        async () => {
          const n = await env.api.get(kinds.Node, { name: 'worker-s' });
          return n.spec?.providerID ? n : undefined;
        },
        { timeoutMs: 10_000, what: 'the Node initialized' },
      );
      assert.equal(node?.spec?.providerID, `openstack:///${server.id}`);
    } finally {
      await ccm.stop();
    }
  });

  it('applies a rotated [LoadBalancer] to the Services on their next reconcile, no restart', async () => {
    const { subnet, publicNetwork } = await env.routedSubnet('10.50.0.0/16');
    await env.api.create(kinds.Node, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'lb-node' },
      status: { addresses: [{ type: 'InternalIP', address: '10.50.0.11' }] },
    });
    const conf = (extra: string) =>
      `[LoadBalancer]\nsubnet-id = ${subnet.id}\nfloating-network-id = ${publicNetwork.id}\n${extra}`;
    const secret = { namespace: 'kube-system', name: 'lb-config' };
    await env.api.create(kinds.Secret, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: secret,
      stringData: { 'cloud.conf': conf('lb-method = ROUND_ROBIN\n') },
    });
    const file = await env.cloudConf(
      `secret-name = ${secret.name}\nsecret-namespace = ${secret.namespace}\n`,
    );
    const ccm = await env.startCcm({ cloudConfig: file, controllers: ['service'] });
    try {
      await env.api.create(kinds.Service, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'rotated', namespace: 'default' },
        spec: { type: 'LoadBalancer', selector: { app: 'rotated' }, ports: [{ protocol: 'TCP', port: 80 }] },
      });
      const svc = { namespace: 'default', name: 'rotated' };
      const ingress = async () =>
        (await env.api.get(kinds.Service, svc)).status?.loadBalancer?.ingress?.[0]?.ip;
      const lbId = await eventually(
        async () =>
          (await ingress()) &&
          (await env.api.get(kinds.Service, svc)).metadata?.annotations?.[Annotation.LoadBalancerId],
        { timeoutMs: 30_000, what: 'the Service Ready' },
      );
      const lb = await env.os.loadBalancer.loadBalancers.get(lbId!);
      const external = await ingress();
      assert.notEqual(external, lb.vip_address, 'a floating IP first');
      const pools = () => env.os.loadBalancer.pools.list({ loadbalancer_id: lb.id }).all();
      assert.deepEqual(
        (await pools()).map((p) => p.lb_algorithm),
        ['ROUND_ROBIN'],
      );

      const current = await env.api.get(kinds.Secret, secret);
      await env.api.update(kinds.Secret, {
        ...current,
        data: {},
        stringData: { 'cloud.conf': conf('lb-method = LEAST_CONNECTIONS\ninternal-lb = true\n') },
      });
      await eventually(
        async () => (await pools()).every((p) => p.lb_algorithm === 'LEAST_CONNECTIONS') || undefined,
        { timeoutMs: 30_000, what: 'the pool on LEAST_CONNECTIONS' },
      );
      await eventually(async () => (await ingress()) === lb.vip_address || undefined, {
        timeoutMs: 30_000,
        what: 'the VIP in status (internal-lb)',
      });
      assert.deepEqual(await env.os.network.floatingIps.list({ port_id: lb.vip_port_id }).all(), []);
      const reloaded = (await env.api.list(kinds.EventsV1Event, { namespace: 'kube-system' })).items.filter(
        (e) => e.reason === 'CloudConfigReloaded' && e.regarding?.name === secret.name,
      );
      assert.match(
        reloaded[0]?.note ?? '',
        /changed: \[LoadBalancer\]\); the controllers use it from their next reconcile$/,
      );
    } finally {
      await ccm.stop();
    }
  });
});
