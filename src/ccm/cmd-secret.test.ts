import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kinds } from '../kube/index.ts';
import { eventually } from '../sim/openstack/testing/harness.ts';
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
});
