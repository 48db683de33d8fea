import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startOpenStackSim, type RunningOpenStackSim } from '../../sim/openstack/server.ts';
import { main } from '../main.ts';

async function run(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['node', 'shiftstack', '--log-level', 'silent', ...args], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    signal: new AbortController().signal,
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('shiftstack openstack', () => {
  let dir: string;
  let sim: RunningOpenStackSim;
  let clouds: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shiftstack-cli-os-'));
    clouds = join(dir, 'clouds.yaml');
    sim = await startOpenStackSim({ cloudsYamlPath: clouds });
  });
  after(async () => {
    await sim?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('whoami prints the identity, scope, config source, endpoints and API versions', async () => {
    const { code, out, err } = await run(
      'openstack',
      'whoami',
      '--clouds-yaml',
      clouds,
      '--os-cloud',
      'shiftstack-demo',
    );
    assert.equal(code, 0, err);
    assert.match(out, new RegExp(`^auth URL: +${sim.authUrl}$`, 'm'));
    assert.match(out, /^auth type: +password$/m);
    assert.match(out, /^user: +demo \(id \w+, domain Default\)$/m);
    assert.match(out, /^scope: +project demo \(id \w+, domain Default\)$/m);
    assert.match(out, /^region: +RegionOne$/m);
    assert.match(out, /^interface: +public$/m);
    assert.match(out, new RegExp(`^config: +clouds.yaml cloud "shiftstack-demo": ${clouds}$`, 'm'));
    assert.match(out, new RegExp(`^ {2}network: +${sim.url}/networking$`, 'm'));
    assert.match(out, new RegExp(`^ {2}block-storage: +${sim.url}/volume/v3/\\w+$`, 'm'));
    assert.match(out, /^ {2}compute: +microversions 2\.1 – 2\.93$/m);
    assert.match(out, /^ {2}load-balancer: +API versions 2\.0 – 2\.26$/m);
    assert.ok(!out.includes('secret'));
  });

  it('catalog lists every endpoint', async () => {
    const { code, out } = await run(
      'openstack',
      'catalog',
      '--clouds-yaml',
      clouds,
      '--os-cloud',
      'shiftstack-admin',
    );
    assert.equal(code, 0);
    assert.match(out, /^TYPE +NAME +INTERFACE +REGION +URL$/m);
    for (const iface of ['public', 'internal', 'admin'])
      assert.match(
        out,
        new RegExp(`^load-balancer +octavia +${iface} +RegionOne +${sim.url}/load-balancer$`, 'm'),
      );
  });

  it('token prints the expiry and scope, and the token only when asked', async () => {
    const hidden = await run('openstack', 'token', '--clouds-yaml', clouds, '--os-cloud', 'shiftstack-demo');
    assert.equal(hidden.code, 0);
    assert.match(hidden.out, /^expires: +\d{4}-\d\d-\d\dT.* \(in 60 min\)$/m);
    assert.match(hidden.out, /^scope: +project demo/m);
    assert.ok(!/^token:/m.test(hidden.out));
    const shown = await run(
      'openstack',
      'token',
      '--clouds-yaml',
      clouds,
      '--os-cloud',
      'shiftstack-demo',
      '--show-token',
    );
    const token = /^token: +(\S+)$/m.exec(shown.out)?.[1];
    assert.ok(token);
    const check = await fetch(`${sim.authUrl}/auth/tokens`, {
      method: 'HEAD',
      headers: { 'x-auth-token': token, 'x-subject-token': token },
    });
    assert.equal(check.status, 200);
  });

  it('reads an OCCM cloud.conf and prints config warnings on stderr', async () => {
    const conf = join(dir, 'cloud.conf');
    await writeFile(
      conf,
      `[Global]\nauth-url = ${sim.authUrl}\nusername = demo\npassword = secret\ntenant-name = demo\nuser-domain-name = Default\ntenant-domain-name = Default\n`,
    );
    const { code, out, err } = await run('openstack', 'whoami', '--cloud-config', conf, '--os-cloud', 'x');
    assert.equal(code, 0, err);
    assert.match(out, new RegExp(`^config: +cloud.conf: ${conf}$`, 'm'));
    assert.match(
      err,
      /^warning: .*cloud\.conf: key "\[Global\] use-clouds": the clouds.yaml file or cloud name given is ignored/m,
    );
  });

  it('exits 1 on a refused authentication, naming the auth URL, the user and the fix, never the password', async () => {
    const bad = join(dir, 'bad.yaml');
    await writeFile(
      bad,
      `clouds:\n  bad:\n    auth: { auth_url: "${sim.authUrl}", username: demo, password: not-the-password, project_name: demo, user_domain_name: Default, project_domain_name: Default }\n`,
    );
    const { code, err } = await run('openstack', 'whoami', '--clouds-yaml', bad, '--os-cloud', 'bad');
    assert.equal(code, 1);
    assert.match(
      err,
      new RegExp(
        `^shiftstack: authentication at ${sim.authUrl} failed for user demo \\(domain Default\\), project demo \\(domain Default\\) → 401`,
        'm',
      ),
    );
    assert.match(err, /Fix: check the user name/);
    assert.ok(!err.includes('not-the-password'));
  });

  it('exits 1 when Keystone cannot be reached', async () => {
    const gone = join(dir, 'gone.yaml');
    await writeFile(
      gone,
      `clouds:\n  gone:\n    auth: { auth_url: "http://127.0.0.1:9/v3", username: demo, password: x, project_name: demo, user_domain_name: Default, project_domain_name: Default }\n`,
    );
    const { code, err } = await run('openstack', 'token', '--clouds-yaml', gone, '--os-cloud', 'gone');
    assert.equal(code, 1);
    assert.match(
      err,
      /^shiftstack: cannot reach Keystone at http:\/\/127\.0\.0\.1:9\/v3: POST http:\/\/127\.0\.0\.1:9\/v3\/auth\/tokens: /m,
    );
  });

  it('exits 2 on a config error, with the file, key and fix', async () => {
    const broken = join(dir, 'broken.yaml');
    await writeFile(
      broken,
      `clouds:\n  broken:\n    auth: { auth_url: "${sim.authUrl}", username: demo, password: x, project_name: demo }\n`,
    );
    const { code, err } = await run('openstack', 'whoami', '--clouds-yaml', broken, '--os-cloud', 'broken');
    assert.equal(code, 2);
    assert.match(
      err,
      /broken\.yaml: key "clouds\.broken\.auth\.user_domain_name": .* Fix: set clouds\.broken\.auth\.user_domain_name/,
    );
  });

  it('whoami works against the real cloud of OS_CLOUD', async (s) => {
    if (!process.env.OS_CLOUD) return s.skip('OS_CLOUD is not set');
    const { code, out, err } = await run('openstack', 'whoami', '--os-cloud', process.env.OS_CLOUD);
    assert.equal(code, 0, err);
    assert.match(out, /^ {2}compute: +microversions \d+\.\d+ – \d+\.\d+$/m);
  });
});
