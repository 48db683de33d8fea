import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError } from '../../lib/config.ts';
import { resolveCloudConfig } from './resolve.ts';
import { findProblem, rejection, sandbox } from './testing/sandbox.ts';
import type { Sandbox } from './testing/sandbox.ts';

const OPENRC = {
  OS_AUTH_URL: 'https://env.example/v3',
  OS_APPLICATION_CREDENTIAL_ID: 'env-ac',
  OS_APPLICATION_CREDENTIAL_SECRET: 'env-secret',
};

const cloudsYaml = (names: string[]) =>
  `clouds:\n${names.map((n) => `  ${n}:\n    auth: { auth_url: https://${n}.example/v3, token: t-${n}, project_id: p }\n`).join('')}`;

describe('resolveCloudConfig', () => {
  let s: Sandbox;
  before(async () => {
    s = await sandbox();
    await s.write('home/.config/openstack/clouds.yaml', cloudsYaml(['home', 'lab']));
    await s.write(
      'work/cloud.conf',
      '[Global]\nauth-url = https://conf.example/v3\ntoken = conf-token\ntenant-id = p\n',
    );
  });
  after(async () => s.cleanup());

  const resolve = (options: {
    env?: Record<string, string>;
    cloudConf?: string;
    cloudsYaml?: string;
    cloud?: string;
  }) => resolveCloudConfig({ ...s.ctx(options.env), ...options, env: options.env ?? {} });

  it('prefers an explicit cloud.conf over OS_CLOUD and OS_* variables', async () => {
    const { config, warnings } = await resolve({
      cloudConf: 'cloud.conf',
      cloud: 'lab',
      env: { ...OPENRC, OS_CLOUD: 'home' },
    });
    assert.equal(config.authUrl, 'https://conf.example/v3');
    assert.equal(config.source.kind, 'cloud.conf');
    assert.match(warnings.join('\n'), /cloud name given is ignored because use-clouds is not true/);
  });

  it('uses clouds.yaml when a cloud is named, and says the OS_* credentials were not used', async () => {
    const named = await resolve({ cloud: 'lab', env: OPENRC });
    assert.equal(named.config.authUrl, 'https://lab.example/v3');
    assert.deepEqual(named.warnings, [
      'environment: OS_* credentials are set but not used: clouds.yaml cloud "lab" is the source',
    ]);
    const viaEnv = await resolve({ env: { OS_CLOUD: 'home' } });
    assert.deepEqual([viaEnv.config.source.cloud, viaEnv.config.source.env], ['home', ['OS_CLOUD']]);
    assert.deepEqual(viaEnv.warnings, []);
  });

  it('uses OS_* variables before searching for clouds.yaml', async () => {
    const { config } = await resolve({ env: OPENRC });
    assert.equal(config.source.kind, 'environment');
    assert.equal(config.applicationCredentialId, 'env-ac');
  });

  it('falls back to the only cloud of a clouds.yaml found by searching', async () => {
    const t = await sandbox();
    try {
      await t.write('etc/openstack/clouds.yaml', cloudsYaml(['site']));
      const { config } = await resolveCloudConfig({ ...t.ctx(), env: { OS_REGION_NAME: 'r' } });
      assert.deepEqual([config.source.cloud, config.source.files], ['site', [join(t.etc, 'clouds.yaml')]]);

      const multi = await rejection(resolve({ env: {} }));
      assert.match(findProblem(multi, 'clouds').fix, /set OS_CLOUD .*home, lab/);
    } finally {
      await t.cleanup();
    }
  });

  it('explains what to do when nothing is configured', async () => {
    const t = await sandbox();
    try {
      const p = findProblem(await rejection(resolveCloudConfig(t.ctx())), 'OS_CLOUD');
      assert.equal(p.file, 'environment');
      assert.match(p.problem, new RegExp(`no clouds.yaml at ${join(t.cwd, 'clouds.yaml')}`));
      assert.match(p.fix, /OS_CLOUD.*openrc.*cloud\.conf/);
    } finally {
      await t.cleanup();
    }
  });

  it('never puts a password, secret or token into an error or a warning', async () => {
    const secret = 'Sup3r-S3cret-PW';
    const files = {
      'leak/type.yaml': `clouds:\n  a:\n    auth: { auth_url: https://k/v3, password: [${secret}], token: true }\n`,
      'leak/syntax.yaml': `clouds:\n  a:\n    auth:\n      password: "${secret}\n   bad: [\n`,
      'leak/url.yaml': `clouds:\n  a:\n    auth: { auth_url: "ftp://u:${secret}@k/v3", password: ${secret} }\n`,
      'leak/typo.yaml': `clouds:\n  a:\n    auth: { auth_url: https://k/v3, passwd: ${secret}, token: ${secret} }\n    verify: maybe\n`,
      'leak/a.conf': `[Global]\npassword = "${secret}\n`,
      'leak/b.conf': `[Global]\npassword = ${secret}\ntls-insecure = nope\napplication-credential-secret = ${secret}\n`,
      'leak/c.conf': `[Global]\nauth-url = https://k/v3\ntrustee-password = ${secret}\npassword\n`,
    };
    const paths: Record<string, string> = {};
    for (const [path, text] of Object.entries(files)) paths[path] = await s.write(path, text);

    const attempts: Array<() => Promise<unknown>> = [
      ...['type', 'syntax', 'url', 'typo'].map((f) => () => resolve({ cloudsYaml: paths[`leak/${f}.yaml`] })),
      ...['a', 'b', 'c'].map((f) => () => resolve({ cloudConf: paths[`leak/${f}.conf`] })),
      () =>
        resolve({
          env: { OS_AUTH_URL: `https://u:${secret}@k/v2.0`, OS_PASSWORD: secret, OS_TOKEN: secret },
        }),
      () => resolve({ env: { OS_AUTH_URL: 'https://k/v3', OS_INSECURE: 'x', OS_TOKEN: secret } }),
      () =>
        resolve({ env: { OS_USERNAME: 'u', OS_PASSWORD: secret, OS_APPLICATION_CREDENTIAL_SECRET: secret } }),
      () => resolve({ env: { OS_PASSWORD: secret, OS_CLOUD: 'nope' } }),
    ];
    let errors = 0;
    for (const attempt of attempts) {
      try {
        const { warnings } = (await attempt()) as { warnings: string[] };
        assert.ok(!warnings.join('\n').includes(secret), warnings.join('\n'));
      } catch (err) {
        assert.ok(ConfigError.is(err), String(err));
        errors++;
        assert.ok(!err.message.includes(secret), err.message);
        assert.ok(!JSON.stringify(err.problems).includes(secret), JSON.stringify(err.problems));
      }
    }
    assert.equal(errors, attempts.length);
  });
});
