import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gcfgLast, gcfgSection, parseGcfg } from '../../lib/gcfg.ts';
import { cloudConfigFromGcfg, loadCloudConf } from './cloud-conf.ts';
import { findProblem, rejection, sandbox } from './testing/sandbox.ts';
import type { Sandbox } from './testing/sandbox.ts';

describe('cloud.conf', () => {
  let s: Sandbox;
  before(async () => (s = await sandbox()));
  after(async () => s.cleanup());

  it('reads every [Global] key and [Metadata] request-timeout, and hands back the document', async () => {
    await s.write('certs/ca.pem', 'pem');
    await s.write('certs/tls.crt', 'crt');
    await s.write('certs/tls.key', 'key');
    const path = await s.write(
      'work/cloud.conf',
      `[Global]
auth-url = "https://keystone.example:5000/v3"
username = ccm
password = "p@ss;word#1"   ; quoted, so ; and # are part of it
user-domain-name = Default
tenant-name = k8s
tenant-domain-id = default
region = RegionOne
os-endpoint-type = internalURL
ca-file = ../certs/ca.pem
cert-file = ${join(s.root, 'certs/tls.crt')}
key-file = ${join(s.root, 'certs/tls.key')}
tls-insecure = false

[LoadBalancer]
lb-provider = ovn

[LoadBalancerClass "internal"]
subnet-id = sub-1

[Metadata]
search-order = metadataService
request-timeout = 1m30s
`,
    );
    const { cloud, document, warnings } = await loadCloudConf(path, s.ctx());
    assert.deepEqual(warnings, []);
    assert.deepEqual(cloud, {
      authUrl: 'https://keystone.example:5000/v3',
      authType: 'password',
      username: 'ccm',
      password: 'p@ss;word#1',
      userDomainName: 'Default',
      projectName: 'k8s',
      projectDomainId: 'default',
      regionName: 'RegionOne',
      systemScope: false,
      interface: 'internal',
      tls: {
        caFile: join(s.root, 'certs/ca.pem'),
        certFile: join(s.root, 'certs/tls.crt'),
        keyFile: join(s.root, 'certs/tls.key'),
        insecure: false,
      },
      endpointOverride: {},
      requestTimeoutMs: 90_000,
      source: { kind: 'cloud.conf', files: [path], env: [] },
    });
    // The CCM reads its own sections from the same parse.
    assert.equal(
      gcfgLast(gcfgSection(document, 'LoadBalancerClass', 'internal'), 'subnet-id')?.value,
      'sub-1',
    );
  });

  it('names file:line, key, value and fix for invalid values', async () => {
    const doc = parseGcfg(
      `[Global]
auth-url = https://k/v3
application-credential-id = id
application-credential-secret = sec
tls-insecure = maybe
os-endpoint-type = private
use-clouds = sometimes
token
[Metadata]
request-timeout = 60
`,
      '/etc/kubernetes/cloud.conf',
    );
    const ps = await rejection(cloudConfigFromGcfg(doc, s.ctx()));
    const tls = findProblem(ps, '[Global] tls-insecure');
    assert.deepEqual([tls.file, tls.value], ['/etc/kubernetes/cloud.conf:5', 'maybe']);
    assert.match(tls.fix, /tls-insecure = true or tls-insecure = false/);
    assert.equal(findProblem(ps, '[Global] os-endpoint-type').file, '/etc/kubernetes/cloud.conf:6');
    assert.match(findProblem(ps, '[Global] use-clouds').fix, /true or false/);
    assert.match(findProblem(ps, '[Global] token').fix, /write token = <value>/);
    const timeout = findProblem(ps, '[Metadata] request-timeout');
    assert.deepEqual([timeout.file, timeout.value], ['/etc/kubernetes/cloud.conf:10', '60']);
    assert.match(timeout.fix, /60s or 1m30s/);

    const zero = parseGcfg(
      '[Global]\nauth-url=https://k/v3\ntoken=t\n[Metadata]\nrequest-timeout=0s\n',
      'c.conf',
    );
    assert.match(
      findProblem(await rejection(cloudConfigFromGcfg(zero, s.ctx())), '[Metadata] request-timeout').problem,
      /greater than 0/,
    );
  });

  it('names [Global] keys for missing auth pieces, and a missing [Global]', async () => {
    const doc = parseGcfg('[Global]\nusername = u\ntenant-name = t\n', 'cloud.conf');
    const ps = await rejection(cloudConfigFromGcfg(doc, s.ctx()));
    assert.match(findProblem(ps, '[Global] auth-url').fix, /Keystone v3 URL/);
    assert.match(findProblem(ps, '[Global] password').fix, /set \[Global\] password/);
    assert.match(
      findProblem(ps, '[Global] user-domain-name').fix,
      /\[Global\] user-domain-name \(usually "Default"\) or \[Global\] user-domain-id/,
    );
    assert.match(findProblem(ps, '[Global] tenant-domain-name').fix, /\[Global\] tenant-id/);

    const none = await rejection(cloudConfigFromGcfg(parseGcfg('[LoadBalancer]\n', 'cloud.conf'), s.ctx()));
    assert.match(findProblem(none, '[Global]').fix, /use-clouds = true/);
  });

  it('warns about unknown, in-tree and repeated keys', async () => {
    const doc = parseGcfg(
      `[Global]
auth-url = https://k/v3
application-credential-id = id
application-credential-secret = sec
project-id = p
secret-name = openstack-credentials
auth-ur = typo
region = a
region = b
`,
      'cloud.conf',
    );
    const { config, warnings } = await cloudConfigFromGcfg(doc, s.ctx());
    assert.equal(config.regionName, 'b');
    assert.deepEqual(warnings, [
      'cloud.conf:5: key "[Global] project-id": unknown key, ignored (did you mean "tenant-id"?)',
      'cloud.conf:6: key "[Global] secret-name": a key of the old in-tree provider that OCCM does not read; ignored',
      'cloud.conf:7: key "[Global] auth-ur": unknown key, ignored (did you mean "auth-url"?)',
      'cloud.conf:9: key "[Global] region": set 2 times; this last one wins',
    ]);
  });

  it('authenticates a trustee the way OCCM does', async () => {
    const doc = parseGcfg(
      `[Global]
auth-url = https://k/v3
username = ignored-user
user-domain-name = Default
password = ignored-pw
trust-id = tr-1
trustee-id = trustee
trustee-password = trustee-pw
`,
      'cloud.conf',
    );
    const { config, warnings } = await cloudConfigFromGcfg(doc, s.ctx());
    assert.deepEqual(
      [config.authType, config.userId, config.password, config.trustId, config.username],
      ['password', 'trustee', 'trustee-pw', 'tr-1', undefined],
    );
    assert.equal(warnings.length, 2);
    assert.match(warnings[0] ?? '', /\[Global\] username": ignored: \[Global\] trustee-id names the user/);
  });

  it('reads clouds.yaml with use-clouds, letting [Global] keys win', async () => {
    const clouds = await s.write(
      'secrets/clouds.yaml',
      `clouds:
  openstack:
    auth_type: password
    auth:
      auth_url: https://from-clouds.example/v3
      username: yaml-user
      password: yaml-pw
      user_domain_name: Default
      project_id: proj
    region_name: YamlRegion
    network_endpoint_override: https://neutron.example
    api_timeout: 10
  other:
    auth: { auth_url: https://other/v3 }
`,
    );
    const doc = parseGcfg(
      `[Global]
use-clouds = true
clouds-file = ${clouds}
cloud = openstack
region = ConfRegion
[Metadata]
request-timeout = 20s
`,
      'cloud.conf',
    );
    const { config, warnings } = await cloudConfigFromGcfg(doc, s.ctx());
    assert.deepEqual(warnings, []);
    assert.equal(config.authUrl, 'https://from-clouds.example/v3');
    assert.equal(config.username, 'yaml-user');
    assert.equal(config.regionName, 'ConfRegion');
    assert.equal(config.requestTimeoutMs, 20_000);
    assert.deepEqual(config.endpointOverride, { network: 'https://neutron.example' });
    assert.deepEqual(config.source, {
      kind: 'cloud.conf',
      files: ['cloud.conf', clouds],
      cloud: 'openstack',
      env: [],
    });

    // A credential in [Global] picks the method even if clouds.yaml names another; clouds-file unset
    // falls back to OS_CLIENT_CONFIG_FILE, and cloud to OS_CLOUD.
    const ac = parseGcfg(
      '[Global]\nuse-clouds\napplication-credential-id = acid\napplication-credential-secret = acsec\n',
      'cloud.conf',
    );
    const viaEnv = await cloudConfigFromGcfg(
      ac,
      s.ctx({ OS_CLIENT_CONFIG_FILE: clouds, OS_CLOUD: 'openstack' }),
    );
    assert.equal(viaEnv.config.authType, 'v3applicationcredential');
    assert.deepEqual(viaEnv.config.source.env, ['OS_CLOUD', 'OS_CLIENT_CONFIG_FILE']);

    const wrong = parseGcfg(
      `[Global]\nuse-clouds = yes\nclouds-file = ${clouds}\ncloud = openstak\n`,
      'cloud.conf',
    );
    const p = findProblem(await rejection(cloudConfigFromGcfg(wrong, s.ctx())), '[Global] cloud');
    assert.deepEqual([p.file, p.value], ['cloud.conf:4', 'openstak']);
    assert.match(p.fix, /set \[Global\] cloud to one of: openstack, other \(did you mean "openstack"\?\)/);

    // A credential missing from both is reported where use-clouds keeps credentials: clouds.yaml.
    const partial = await s.write(
      'secrets/partial.yaml',
      'clouds:\n  c:\n    auth: { auth_url: https://k/v3, user_id: u }\n',
    );
    const missing = await rejection(
      cloudConfigFromGcfg(
        parseGcfg(`[Global]\nuse-clouds = true\nclouds-file = ${partial}\n`, 'cloud.conf'),
        s.ctx(),
      ),
    );
    assert.equal(findProblem(missing, 'clouds.c.auth.password').file, partial);
  });

  it('ignores clouds-file and cloud without use-clouds, with a warning', async () => {
    const doc = parseGcfg('[Global]\nauth-url = https://k/v3\ntoken = t\ncloud = x\n', 'cloud.conf');
    const { warnings } = await cloudConfigFromGcfg(doc, s.ctx());
    assert.match(warnings[0] ?? '', /cloud\.conf:4: key "\[Global\] cloud": ignored: use-clouds is not true/);
  });
});
