import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OpenStackClient } from '../../openstack/client.ts';
import { findProblem, rejection, sandbox, type Sandbox } from '../../openstack/config/testing/sandbox.ts';
import { PASSWORD, startTestCloud, type TestCloud } from '../../sim/openstack/testing/harness.ts';
import { parseOsloIni } from './ini.ts';
import { neutronCloud } from './neutron.ts';

/** `[neutron]` as OpenShift's cluster-network-operator renders it (bindata/network/kuryr/003-config.yaml). */
function operatorNeutron(authUrl: string, extra = ''): string {
  return [
    '[neutron]',
    'auth_type = password',
    `auth_url = ${authUrl}`,
    'insecure = false',
    'token = ""',
    `password = ${PASSWORD.replace(/\$/g, '$$$$')}`,
    'username = demo',
    'project_domain_name = Default',
    'project_domain_id = ""',
    'project_id = ""',
    'project_name = demo',
    'user_domain_name = Default',
    'user_domain_id = ""',
    'region_name = RegionOne',
    extra,
  ].join('\n');
}

describe("kuryr.conf [neutron]: keystoneauth's options → the cloud", () => {
  let cloud: TestCloud;
  let box: Sandbox;
  before(async () => {
    cloud = await startTestCloud();
    box = await sandbox();
  });
  after(async () => {
    await cloud?.close();
    await box?.cleanup();
  });

  it("reads the operator's rendering: empty values unset, and the credentials authenticate", async () => {
    const doc = parseOsloIni(operatorNeutron(cloud.authUrl), 'kuryr.conf');
    const got = await neutronCloud(doc, box.ctx());
    assert.equal(got.from, 'kuryr.conf');
    assert.deepEqual(got.warnings, []);
    assert.equal(got.config.authType, 'password');
    assert.equal(got.config.username, 'demo');
    assert.equal(got.config.projectName, 'demo');
    assert.equal(got.config.regionName, 'RegionOne');
    assert.equal(got.config.token, undefined, 'token = "" is unset');
    assert.deepEqual(got.config.source, { kind: 'kuryr.conf', files: ['kuryr.conf'], env: [] });
    const client = await OpenStackClient.fromConfig(got.config);
    try {
      const token = await client.session.token();
      assert.equal(token.token.project?.name, 'demo');
    } finally {
      await client.close();
    }
  });

  it('application credentials; a key of another plugin is named in a warning and ignored', async () => {
    const doc = parseOsloIni(
      [
        '[neutron]',
        'auth_type = v3applicationcredential',
        `auth_url = ${cloud.authUrl}`,
        'application_credential_id = abc',
        'application_credential_secret = s3cret',
        'username = demo',
      ].join('\n'),
      'kuryr.conf',
    );
    const got = await neutronCloud(doc, box.ctx());
    assert.equal(got.config.authType, 'v3applicationcredential');
    assert.equal(got.config.applicationCredentialId, 'abc');
    assert.equal(got.config.username, undefined);
    assert.deepEqual(got.warnings, [
      'kuryr.conf:6: key "[neutron] username": not an option of auth_type v3applicationcredential, ignored',
    ]);
  });

  it('every bad value in one report naming file:line, [neutron] key and the fix; secrets never printed', async () => {
    const doc = parseOsloIni(
      [
        '[neutron]',
        'auth_type = v2password',
        'auth_url = keystone:5000',
        'password = p$w',
        'insecure = maybe',
        'endpoint_type = pubic',
        'usernme = demo',
      ].join('\n'),
      'kuryr.conf',
    );
    const problems = await rejection(neutronCloud(doc, box.ctx()));
    assert.match(findProblem(problems, '[neutron] auth_type').problem, /Keystone v2/);
    assert.equal(findProblem(problems, '[neutron] auth_type').file, 'kuryr.conf:2');
    assert.match(findProblem(problems, '[neutron] insecure').fix, /true or false/);
    assert.match(findProblem(problems, '[neutron] endpoint_type').fix, /did you mean "public"/);
    const pw = findProblem(problems, '[neutron] password');
    assert.equal(pw.value, '[REDACTED]');
    assert.doesNotMatch(JSON.stringify(problems), /p\$w/);
  });

  it('a misspelt key is a warning with a did-you-mean, and the problem it causes names the key to set', async () => {
    const doc = parseOsloIni(
      [
        '[neutron]',
        'auth_type = password',
        `auth_url = ${cloud.authUrl}`,
        'usernme = demo',
        'password = x',
      ].join('\n'),
      'kuryr.conf',
    );
    try {
      await neutronCloud(doc, box.ctx());
      assert.fail('no error');
    } catch (err) {
      const e = err as { warnings: string[]; problems: { key: string }[] };
      assert.ok(
        e.warnings.some((w) =>
          /\[neutron\] usernme": not an option of \[neutron\], ignored \(did you mean "username"\?\)/.test(w),
        ),
      );
      assert.ok(
        e.problems.some((p) => p.key.startsWith('[neutron] user')),
        JSON.stringify(e.problems),
      );
    }
  });

  it('without auth_url or auth_type the cloud comes from clouds.yaml / OS_* as for every shiftstack command', async () => {
    const doc = parseOsloIni('[neutron]\nregion_name = RegionOne\n', 'kuryr.conf');
    const got = await neutronCloud(
      doc,
      box.ctx({
        OS_AUTH_URL: cloud.authUrl,
        OS_USERNAME: 'demo',
        OS_PASSWORD: PASSWORD,
        OS_PROJECT_NAME: 'demo',
        OS_USER_DOMAIN_NAME: 'Default',
        OS_PROJECT_DOMAIN_NAME: 'Default',
      }),
    );
    assert.equal(got.from, 'clouds.yaml or OS_* variables');
    assert.equal(got.config.source.kind, 'environment');
  });
});
