import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { findCloudsYaml, loadCloudsYaml, loadCloudsYamlText } from './clouds-yaml.ts';
import { findProblem, rejection, sandbox } from './testing/sandbox.ts';
import type { Sandbox } from './testing/sandbox.ts';

const MINIMAL = `clouds:
  prod:
    auth:
      auth_url: https://keystone.prod.example:5000/v3
      username: alice
      password: from-clouds
      user_domain_name: Default
      project_name: ops
      project_domain_name: Default
`;

describe('clouds.yaml', () => {
  let s: Sandbox;
  before(async () => (s = await sandbox()));
  after(async () => s.cleanup());

  it('reads every supported key, merges secure.yaml and records its sources', async () => {
    await s.write('home/.config/openstack/ca.pem', 'pem');
    await s.write('home/client.crt', 'crt');
    await s.write('home/client.key', 'key');
    const file = await s.write(
      'case1/clouds.yaml',
      `clouds:
  prod:
    auth_type: v3password
    auth:
      auth-url: https://keystone.prod.example:5000/v3
      username: alice
      user_domain_name: Default
      tenant_name: ops
      project_domain_id: default
      trust_id: t-1
    region_name: RegionTwo
    endpoint_type: internalURL
    cacert: ~/.config/openstack/ca.pem
    cert: ~/client.crt
    key: ~/client.key
    verify: false
    identity_api_version: 3
    api_timeout: 12.5
    network_endpoint_override: https://neutron.example:9696
    load_balancer_endpoint_override: https://octavia.example:9876
    compute_endpoint_override: https://nova.example:8774/v2.1
  other:
    auth: { auth_url: https://other.example/v3, token: x }
`,
    );
    const secure = await s.write(
      'case1/secure.yaml',
      'clouds:\n  prod:\n    auth:\n      password: s3cret-from-secure\n',
    );
    const { config, warnings } = await loadCloudsYaml(
      s.ctx({ OS_CLOUD: 'prod', OS_CLIENT_SECURE_FILE: secure }),
      { file },
    );
    assert.deepEqual(warnings, [
      `${file}: key "clouds.prod.auth.tenant_name": ignored: the trust in clouds.prod.auth.trust_id sets the scope`,
      `${file}: key "clouds.prod.cacert": not used: clouds.prod.verify turns certificate verification off`,
    ]);
    assert.deepEqual(config, {
      authUrl: 'https://keystone.prod.example:5000/v3',
      authType: 'password',
      username: 'alice',
      password: 's3cret-from-secure',
      userDomainName: 'Default',
      projectName: 'ops',
      projectDomainId: 'default',
      trustId: 't-1',
      regionName: 'RegionTwo',
      systemScope: false,
      interface: 'internal',
      tls: {
        caFile: join(s.home, '.config/openstack/ca.pem'),
        certFile: join(s.home, 'client.crt'),
        keyFile: join(s.home, 'client.key'),
        insecure: true,
      },
      endpointOverride: {
        network: 'https://neutron.example:9696',
        'load-balancer': 'https://octavia.example:9876',
        compute: 'https://nova.example:8774/v2.1',
      },
      requestTimeoutMs: 12_500,
      source: {
        kind: 'clouds.yaml',
        files: [file, secure],
        cloud: 'prod',
        env: ['OS_CLOUD', 'OS_CLIENT_SECURE_FILE'],
      },
    });
  });

  it('searches OS_CLIENT_CONFIG_FILE, then ./, ~/.config/openstack and /etc/openstack', async () => {
    const t = await sandbox();
    try {
      assert.equal(await findCloudsYaml(t.ctx()), undefined);
      const etc = await t.write('etc/openstack/clouds.yaml', MINIMAL);
      assert.equal(await findCloudsYaml(t.ctx()), etc);
      const home = await t.write('home/.config/openstack/clouds.yml', MINIMAL);
      assert.equal(await findCloudsYaml(t.ctx()), home);
      const xdg = await t.write('xdg/openstack/clouds.json', JSON.stringify({ clouds: {} }));
      assert.equal(await findCloudsYaml(t.ctx({ XDG_CONFIG_HOME: join(t.root, 'xdg') })), xdg);
      const cwd = await t.write('work/clouds.yaml', MINIMAL);
      assert.equal(await findCloudsYaml(t.ctx()), cwd);
      const fromEnv = await t.write('elsewhere/c.yaml', MINIMAL);
      assert.equal(await findCloudsYaml(t.ctx({ OS_CLIENT_CONFIG_FILE: fromEnv })), fromEnv);
      // An explicit path beats the variable; relative paths are taken from cwd.
      assert.equal(await findCloudsYaml(t.ctx({ OS_CLIENT_CONFIG_FILE: fromEnv }), 'clouds.yaml'), cwd);

      const [missing] = await rejection(
        findCloudsYaml(t.ctx({ OS_CLIENT_CONFIG_FILE: '/nope/clouds.yaml' })),
      );
      assert.deepEqual(
        { file: missing?.file, key: missing?.key, value: missing?.value },
        { file: 'environment', key: 'OS_CLIENT_CONFIG_FILE', value: '/nope/clouds.yaml' },
      );
      assert.match(missing?.fix ?? '', /point OS_CLIENT_CONFIG_FILE at an existing file/);
    } finally {
      await t.cleanup();
    }
  });

  it('uses the only cloud without OS_CLOUD, and reads secure.yaml from the search path', async () => {
    const t = await sandbox();
    try {
      await t.write('work/clouds.yaml', MINIMAL.replace('      password: from-clouds\n', ''));
      const secure = await t.write(
        'home/.config/openstack/secure.yaml',
        'clouds:\n  prod:\n    auth:\n      password: pw\n',
      );
      const { config } = await loadCloudsYaml(t.ctx());
      assert.equal(config.password, 'pw');
      assert.equal(config.source.cloud, 'prod');
      assert.deepEqual(config.source.files, [join(t.cwd, 'clouds.yaml'), secure]);
      assert.deepEqual(config.source.env, []);
    } finally {
      await t.cleanup();
    }
  });

  it('names the clouds found when the selection is missing or wrong', async () => {
    const file = await s.write(
      'case3/clouds.yaml',
      `${MINIMAL}  staging:\n    auth: { auth_url: https://x/v3 }\n`,
    );
    const none = findProblem(await rejection(loadCloudsYaml(s.ctx(), { file })), 'clouds');
    assert.equal(none.file, file);
    assert.match(none.problem, /2 clouds are defined and none is selected/);
    assert.match(none.fix, /OS_CLOUD.*prod, staging/);

    const env = findProblem(
      await rejection(loadCloudsYaml(s.ctx({ OS_CLOUD: 'prd' }), { file })),
      'OS_CLOUD',
    );
    assert.equal(env.file, 'environment');
    assert.equal(env.value, 'prd');
    assert.match(env.problem, new RegExp(`no cloud named "prd" in ${file}.*prod, staging`));
    assert.match(env.fix, /did you mean "prod"/);

    const explicit = findProblem(
      await rejection(loadCloudsYaml(s.ctx(), { file, cloud: 'stagin' })),
      'clouds',
    );
    assert.equal(explicit.file, file);
    assert.match(explicit.fix, /did you mean "staging"/);
  });

  it('maps auth types, and refuses Keystone v2 with the v3 fix', async () => {
    const file = await s.write(
      'case4/clouds.yaml',
      `clouds:
  ac:
    auth_type: application_credential
    auth: { auth_url: https://k/v3, application_credential_id: id1, application_credential_secret: sec }
  tok:
    auth_type: v3token
    auth: { auth_url: https://k/v3, token: tok, project_id: p1 }
  old:
    auth_type: v2password
    identity_api_version: 2
    auth: { auth_url: https://k/v2.0, username: u, password: p }
`,
    );
    const ac = await loadCloudsYaml(s.ctx(), { file, cloud: 'ac' });
    assert.equal(ac.config.authType, 'v3applicationcredential');
    assert.equal(ac.config.applicationCredentialSecret, 'sec');
    const tok = await loadCloudsYaml(s.ctx(), { file, cloud: 'tok' });
    assert.equal(tok.config.authType, 'token');
    assert.equal(tok.config.projectId, 'p1');

    const ps = await rejection(loadCloudsYaml(s.ctx(), { file, cloud: 'old' }));
    const authType = findProblem(ps, 'clouds.old.auth_type');
    assert.equal(authType.value, 'v2password');
    assert.match(authType.problem, /Keystone v2/);
    assert.match(authType.fix, /v3password/);
    const version = findProblem(ps, 'clouds.old.identity_api_version');
    assert.equal(version.value, 2);
    assert.match(version.fix, /set it to 3/);
  });

  it('reports a missing auth_url, missing credentials and a missing domain in clouds.yaml words', async () => {
    const file = await s.write(
      'case5/clouds.yaml',
      `clouds:
  a:
    auth: { username: alice, project_name: ops }
`,
    );
    const ps = await rejection(loadCloudsYaml(s.ctx(), { file }));
    assert.match(findProblem(ps, 'clouds.a.auth.auth_url').fix, /https:\/\/keystone\.example\.com:5000\/v3/);
    assert.match(findProblem(ps, 'clouds.a.auth.password').fix, /set clouds\.a\.auth\.password/);
    assert.match(findProblem(ps, 'clouds.a.auth.user_domain_name').fix, /usually "Default".*user_domain_id/);
    assert.match(findProblem(ps, 'clouds.a.auth.project_domain_name').fix, /usually "Default"/);
    for (const p of ps) assert.equal(p.file, file);
  });

  it('fills user and project domains from domain_name when a project is the scope', async () => {
    const file = await s.write(
      'case6/clouds.yaml',
      `clouds:
  a:
    auth: { auth_url: https://k/v3, username: u, password: p, project_name: ops, domain_name: Default }
  d:
    auth: { auth_url: https://k/v3, user_id: uid, password: p, domain_id: dom }
    username: top-level-user
`,
    );
    const a = await loadCloudsYaml(s.ctx(), { file, cloud: 'a' });
    assert.equal(a.config.userDomainName, 'Default');
    assert.equal(a.config.projectDomainName, 'Default');
    assert.equal(a.config.domainName, undefined);
    // Without a project, the domain is the scope; auth keys beside auth: are read too.
    const d = await loadCloudsYaml(s.ctx(), { file, cloud: 'd' });
    assert.equal(d.config.domainId, 'dom');
    assert.equal(d.config.username, 'top-level-user');
  });

  it('warns about unknown keys with a suggestion and never repeats their values', async () => {
    const file = await s.write(
      'case7/clouds.yaml',
      `clouds:
  a:
    regon_name: r1
    compute_api_version: '2.1'
    profile: vexxhost
    auth:
      auth_url: https://k/v3
      application_credential_id: id
      application_credential_secret: sec
      pasword: hunter2-typo
`,
    );
    const { warnings } = await loadCloudsYaml(s.ctx(), { file });
    const text = warnings.join('\n');
    assert.match(text, /clouds\.a\.regon_name": unknown key, ignored \(did you mean "region_name"\?\)/);
    assert.match(text, /clouds\.a\.auth\.pasword": unknown key, ignored \(did you mean "password"\?\)/);
    assert.match(text, /clouds\.a\.compute_api_version": an openstacksdk per-service setting/);
    assert.match(text, /clouds\.a\.profile": vendor profiles are not supported/);
    assert.ok(!text.includes('hunter2'));
  });

  it('points at secure.yaml for a bad value that came from it, and at the file for bad YAML', async () => {
    const file = await s.write('case8/clouds.yaml', MINIMAL);
    const secure = await s.write(
      'case8/secure.yaml',
      'clouds:\n  prod:\n    verify: maybe\n    interface: publik\n',
    );
    const ps = await rejection(loadCloudsYaml(s.ctx({ OS_CLIENT_SECURE_FILE: secure }), { file }));
    const verify = findProblem(ps, 'clouds.prod.verify');
    assert.deepEqual([verify.file, verify.value], [secure, 'maybe']);
    assert.match(findProblem(ps, 'clouds.prod.interface').fix, /did you mean "public"/);

    const bad = await s.write('case8/bad.yaml', 'clouds:\n  a:\n   b: 1\n  c: [\n');
    const [syntax] = await rejection(loadCloudsYaml(s.ctx(), { file: bad }));
    assert.equal(syntax?.file, bad);
    assert.match(syntax?.problem ?? '', /invalid YAML/);

    const noClouds = await s.write('case8/empty.yaml', 'cache: {}\n');
    assert.match(
      findProblem(await rejection(loadCloudsYaml(s.ctx(), { file: noClouds })), 'clouds').fix,
      /add a clouds: map/,
    );
  });

  it('says where it looked when there is no clouds.yaml at all', async () => {
    const t = await sandbox();
    try {
      const [p] = await rejection(loadCloudsYaml(t.ctx()));
      assert.match(
        p?.problem ?? '',
        new RegExp(`no clouds.yaml found; looked for ${join(t.cwd, 'clouds.yaml')}`),
      );
      assert.match(p?.problem ?? '', /etc\/openstack\/clouds\.yaml/);
      assert.match(p?.fix ?? '', /OS_CLIENT_CONFIG_FILE/);
    } finally {
      await t.cleanup();
    }
  });

  it('reads a clouds.yaml held in memory, with its CA, and names the origin in problems', async () => {
    const origin = 'Secret default/capo-cloud key clouds.yaml';
    const { config } = await loadCloudsYamlText(s.ctx({ OS_CLOUD: 'other' }), {
      text: MINIMAL,
      origin,
      cloud: 'prod',
      caPem: '-----BEGIN CERTIFICATE-----',
    });
    assert.equal(config.username, 'alice');
    assert.equal(config.projectName, 'ops');
    assert.equal(config.tls.caPem, '-----BEGIN CERTIFICATE-----');
    assert.deepEqual(config.source.files, [origin]);

    const unknown = findProblem(
      await rejection(loadCloudsYamlText(s.ctx(), { text: MINIMAL, origin, cloud: 'prd' })),
      'clouds',
    );
    assert.equal(unknown.file, origin);
    assert.match(unknown.fix, /did you mean "prod"/);
    const broken = await rejection(loadCloudsYamlText(s.ctx(), { text: 'clouds: [', origin, cloud: 'prod' }));
    assert.match(broken[0]!.problem, /not valid YAML/);
  });
});
