/**
 * Every config source end to end: a clouds.yaml, a clouds.yaml with its secrets in secure.yaml,
 * OS_* variables and OCCM's cloud.conf, each resolved by resolveCloudConfig and used to call the
 * cloud (the emulator, or the real cloud of OS_CLOUD: its demo credentials are written out anew).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resolveCloudConfig, type ResolveOptions } from '../config/resolve.ts';
import { sandbox, type Sandbox } from '../config/testing/sandbox.ts';
import type { CloudConfig } from '../config/types.ts';
import { openClientTarget, unique, type ClientTarget } from './testing/target.ts';
import { TokenCache } from './token-cache.ts';

describe('config sources end to end', () => {
  let t: ClientTarget;
  let s: Sandbox;
  let d: CloudConfig;
  before(async () => {
    t = await openClientTarget();
    s = await sandbox();
    d = t.demo;
  });
  after(async () => {
    await s?.cleanup();
    await t?.close();
  });

  /** Resolves, authenticates with a cache of its own (so nothing is reused), lists networks. */
  async function use(
    options: Omit<ResolveOptions, 'env' | 'homedir' | 'cwd'>,
    env: Record<string, string> = {},
  ) {
    const { config, warnings } = await resolveCloudConfig({ ...s.ctx(env), ...options });
    const client = await t.client(config, { tokenCache: new TokenCache() });
    const { token } = await client.session.token();
    const res = await client
      .serviceClient('network')
      .request({ method: 'GET', path: 'networks', label: 'network_list' });
    assert.equal(res.status, 200);
    return { config, warnings, token };
  }

  it('reads a clouds.yaml', async () => {
    const file = await s.write(
      'a/clouds.yaml',
      `clouds:
  mine:
    auth:
      auth_url: ${d.authUrl}
      username: ${d.username}
      password: ${d.password}
      project_name: ${d.projectName}
      user_domain_name: Default
      project_domain_name: Default
    region_name: ${d.regionName ?? 'RegionOne'}
    interface: internal
`,
    );
    const { config, token } = await use({ cloudsYaml: file, cloud: 'mine' });
    assert.deepEqual(
      [config.source.kind, config.interface, token.user.name],
      ['clouds.yaml', 'internal', d.username],
    );
  });

  it('reads the password from secure.yaml', async () => {
    const file = await s.write(
      'b/clouds.yaml',
      `clouds:
  mine:
    auth: { auth_url: "${d.authUrl}", username: ${d.username}, project_name: ${d.projectName}, user_domain_name: Default, project_domain_name: Default }
`,
    );
    const secure = await s.write(
      'b/secure.yaml',
      `clouds:\n  mine:\n    auth:\n      password: ${d.password}\n`,
    );
    const { config, token } = await use(
      { cloudsYaml: file, cloud: 'mine' },
      { OS_CLIENT_SECURE_FILE: secure },
    );
    assert.ok(
      config.source.files.some((f) => f.endsWith('secure.yaml')),
      config.source.files.join(),
    );
    assert.equal(token.project?.name, d.projectName);
  });

  it('reads OS_* variables', async () => {
    const { config, token } = await use(
      {},
      {
        OS_AUTH_URL: d.authUrl,
        OS_USERNAME: d.username!,
        OS_PASSWORD: d.password!,
        OS_PROJECT_NAME: d.projectName!,
        OS_USER_DOMAIN_NAME: 'Default',
        OS_PROJECT_DOMAIN_NAME: 'Default',
        OS_IDENTITY_API_VERSION: '3',
      },
    );
    assert.equal(config.source.kind, 'environment');
    assert.equal(token.user.name, d.username);
  });

  it("reads OCCM's cloud.conf, with a password and with an application credential", async () => {
    const conf = await s.write(
      'c/cloud.conf',
      `[Global]
auth-url = ${d.authUrl}
username = ${d.username}
password = ${d.password}
tenant-name = ${d.projectName}
user-domain-name = Default
tenant-domain-name = Default
region = ${d.regionName ?? 'RegionOne'}
`,
    );
    const { config, token } = await use({ cloudConf: conf });
    assert.deepEqual([config.source.kind, token.project?.name], ['cloud.conf', d.projectName]);

    const demo = await t.client(d);
    const userId = (await demo.session.token()).token.user.id;
    const ac = await demo.identity.applicationCredentials.create(userId, { name: unique('client-conf') });
    try {
      const acConf = await s.write(
        'c/ac.conf',
        `[Global]\nauth-url = ${d.authUrl}\napplication-credential-id = ${ac.id}\napplication-credential-secret = ${ac.secret}\n`,
      );
      const viaAc = await use({ cloudConf: acConf });
      assert.equal(viaAc.config.authType, 'v3applicationcredential');
      assert.equal(viaAc.token.application_credential?.id, ac.id);
    } finally {
      await demo.identity.applicationCredentials.delete(userId, ac.id);
    }
  });
});
