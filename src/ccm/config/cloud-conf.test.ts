import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, type ConfigProblem } from '../../lib/config.ts';
import { parseGcfg } from '../../lib/gcfg.ts';
import { sandbox, type Sandbox } from '../../openstack/config/testing/sandbox.ts';
import { ccmConfigFromGcfg, loadCcmConfig, readCcmSections, secretRefOf } from './cloud-conf.ts';
import { LOAD_BALANCER_DEFAULTS } from './load-balancer.ts';
import { secretConf } from './secret-overlay.ts';

const FILE = '/etc/kubernetes/cloud.conf';
const ctx = { env: {}, homedir: '/nonexistent', cwd: '/nonexistent' };
const GLOBAL = `[Global]
auth-url = https://keystone.example:5000/v3
username = ccm
password = s3cret
tenant-name = k8s
user-domain-name = Default
tenant-domain-name = Default
`;

function problemsOf(fn: () => unknown): ConfigProblem[] {
  try {
    fn();
  } catch (err) {
    assert.ok(ConfigError.is(err), String(err));
    return [...err.problems];
  }
  assert.fail('expected a ConfigError');
}

async function rejected(promise: Promise<unknown>): Promise<ConfigProblem[]> {
  try {
    await promise;
  } catch (err) {
    assert.ok(ConfigError.is(err), String(err));
    return [...err.problems];
  }
  assert.fail('expected a ConfigError');
}

/** The problem for `key`, checked to name the line, the value and a fix. */
function problem(problems: ConfigProblem[], key: string): ConfigProblem {
  const p = problems.find((q) => q.key === key);
  assert.ok(p, `no problem for ${key} in ${JSON.stringify(problems, null, 1)}`);
  assert.match(p.file, /:\d+$/, `${key}: no line in ${p.file}`);
  assert.ok(p.fix.length > 10, `${key}: no fix`);
  return p;
}

describe('CCM cloud.conf', () => {
  let s: Sandbox;
  before(async () => (s = await sandbox()));
  after(async () => s.cleanup());

  it('applies OCCM defaults when only [Global] is there', async () => {
    const path = await s.write('work/cloud.conf', GLOBAL);
    const config = await loadCcmConfig(path, s.ctx());
    assert.equal(config.cloud.username, 'ccm');
    assert.deepEqual(config.loadBalancer, LOAD_BALANCER_DEFAULTS);
    assert.deepEqual(LOAD_BALANCER_DEFAULTS, {
      enabled: true,
      lbMethod: 'ROUND_ROBIN',
      lbProvider: 'amphora',
      createMonitor: false,
      monitorDelay: 5,
      monitorTimeout: 3,
      monitorMaxRetries: 1,
      monitorMaxRetriesDown: 3,
      manageSecurityGroups: false,
      internalLb: false,
      nodeSelector: new Map(),
      cascadeDelete: true,
      enableIngressHostname: false,
      ingressHostnameSuffix: 'nip.io',
      containerStore: 'barbican',
      maxSharedLb: 2,
      providerRequiresSerialApiCalls: false,
    });
    assert.deepEqual(config.loadBalancerClasses, new Map());
    assert.deepEqual(config.networking, {
      ipv6SupportDisabled: false,
      publicNetworkNames: [],
      internalNetworkNames: [],
      addressSortOrder: [],
    });
    assert.deepEqual(config.route, {});
    assert.deepEqual(config.metadata, { searchOrder: ['configDrive', 'metadataService'] });
    assert.equal(config.secret, undefined);
    assert.equal(config.regionalProviderId, false);
    assert.deepEqual(config.warnings, []);
  });

  it('reads OS_CCM_REGIONAL and reports OCCM_WAIT_LB_ACTIVE_STEPS as not needed', async () => {
    const config = await ccmConfigFromGcfg(parseGcfg(GLOBAL, FILE), {
      ...ctx,
      env: { OS_CCM_REGIONAL: 'true', OCCM_WAIT_LB_ACTIVE_STEPS: '40' },
    });
    assert.equal(config.regionalProviderId, true);
    assert.deepEqual(config.warnings, [
      'environment: key "OCCM_WAIT_LB_ACTIVE_STEPS": ignored: shiftstack does not wait for load balancers in a fixed number of steps',
    ]);
  });

  it('reads every key of every section', async () => {
    const doc = parseGcfg(
      `${GLOBAL}
[LoadBalancer]
enabled = false
lb-version = v2
subnet-id = vip-subnet
member-subnet-id = member-subnet
network-id = vip-net
floating-network-id = ext-net
floating-subnet-id = ext-subnet
floating-subnet = public-*
floating-subnet-tags = &a,b
lb-method = LEAST_CONNECTIONS
lb-provider = amphora
create-monitor = yes
monitor-delay = 10s
monitor-timeout = 1m
monitor-max-retries = 10
monitor-max-retries-down = 2
manage-security-groups = on
internal-lb = 1
node-selector = role=lb, edge
cascade-delete = false
flavor-id = small
availability-zone = az1
enable-ingress-hostname = true
ingress-hostname-suffix = sslip.io
default-tls-container-ref = https://barbican/v1/containers/c1
container-store = external
max-shared-lb = 5
provider-requires-serial-api-calls

[LoadBalancerClass "internal"]
network-id = int-net
subnet-id = int-subnet
member-subnet-id = int-member

[LoadBalancerClass "Public"]
floating-network-id = pub-net
floating-subnet-id = pub-subnet
floating-subnet = ~pub-[0-9]+
floating-subnet-tags = !internal

[Networking]
ipv6-support-disabled = true
public-network-name = public
public-network-name = public2
internal-network-name = private
address-sort-order = 10.0.0.0/8, 192.168.0.0/16

[Route]
router-id = router-1

[Metadata]
search-order = metadataService
request-timeout = 30s
`,
      FILE,
    );
    const config = await ccmConfigFromGcfg(doc, ctx);
    assert.deepEqual(config.loadBalancer, {
      enabled: false,
      subnetId: 'vip-subnet',
      memberSubnetId: 'member-subnet',
      networkId: 'vip-net',
      floatingNetworkId: 'ext-net',
      floatingSubnetId: 'ext-subnet',
      floatingSubnet: 'public-*',
      floatingSubnetTags: '&a,b',
      lbMethod: 'LEAST_CONNECTIONS',
      lbProvider: 'amphora',
      createMonitor: true,
      monitorDelay: 10,
      monitorTimeout: 60,
      monitorMaxRetries: 10,
      monitorMaxRetriesDown: 2,
      manageSecurityGroups: true,
      internalLb: true,
      nodeSelector: new Map([
        ['role', 'lb'],
        ['edge', ''],
      ]),
      cascadeDelete: false,
      flavorId: 'small',
      availabilityZone: 'az1',
      enableIngressHostname: true,
      ingressHostnameSuffix: 'sslip.io',
      defaultTlsContainerRef: 'https://barbican/v1/containers/c1',
      containerStore: 'external',
      maxSharedLb: 5,
      providerRequiresSerialApiCalls: true,
    });
    assert.deepEqual(
      config.loadBalancerClasses,
      new Map([
        [
          'internal',
          { name: 'internal', networkId: 'int-net', subnetId: 'int-subnet', memberSubnetId: 'int-member' },
        ],
        [
          'Public',
          {
            name: 'Public',
            floatingNetworkId: 'pub-net',
            floatingSubnetId: 'pub-subnet',
            floatingSubnet: '~pub-[0-9]+',
            floatingSubnetTags: '!internal',
          },
        ],
      ]),
    );
    assert.deepEqual(config.networking, {
      ipv6SupportDisabled: true,
      publicNetworkNames: ['public', 'public2'],
      internalNetworkNames: ['private'],
      addressSortOrder: ['10.0.0.0/8', '192.168.0.0/16'],
    });
    assert.deepEqual(config.route, { routerId: 'router-1' });
    assert.deepEqual(config.metadata, { searchOrder: ['metadataService'] });
    assert.equal(config.cloud.requestTimeoutMs, 30_000);
    // Every option here is acted on: nothing to report.
    assert.deepEqual(config.warnings, []);
  });

  it('reports every invalid value at once with file:line, key, value and fix', async () => {
    const doc = parseGcfg(
      `[Global]
auth-url = https://keystone.example:5000/v3
tls-insecure = yes
[LoadBalancer]
enabled = maybe
lb-version = v1
lb-method = round_robin
monitor-delay = 5
monitor-timeout = -3s
monitor-max-retries = 0
monitor-max-retries-down = 11
max-shared-lb = -1
subnet-id
floating-subnet = ~public-(
[LoadBalancerClass]
subnet-id = x
[Metadata]
search-order = configDrive,metadataService,configDrive
`,
      FILE,
    );
    const problems = await rejected(ccmConfigFromGcfg(doc, ctx));
    const expect = (key: string, line: number, value: unknown, text: RegExp, fix: RegExp) => {
      const p = problem(problems, key);
      assert.equal(p.file, `${FILE}:${line}`, key);
      assert.deepEqual(p.value, value, key);
      assert.match(p.problem, text, key);
      assert.match(p.fix, fix, key);
    };
    expect('[LoadBalancer] enabled', 5, 'maybe', /not a boolean/, /true or false/);
    expect('[LoadBalancer] lb-version', 6, 'v1', /only LBaaS v2/, /lb-version = v2/);
    expect('[LoadBalancer] lb-method', 7, 'round_robin', /algorithm/, /did you mean "ROUND_ROBIN"/);
    expect('[LoadBalancer] monitor-delay', 8, '5', /not a Go duration/, /monitor-delay = 5s/);
    expect('[LoadBalancer] monitor-timeout', 9, '-3s', /negative/, /3s/);
    expect('[LoadBalancer] monitor-max-retries', 10, '0', /between 1 and 10/, /1 to 10/);
    expect('[LoadBalancer] monitor-max-retries-down', 11, '11', /between 1 and 10/, /1 to 10/);
    expect('[LoadBalancer] max-shared-lb', 12, '-1', /at least 0/, /turns sharing off/);
    expect('[LoadBalancer] subnet-id', 13, undefined, /no value/, /subnet-id = <value>/);
    expect('[LoadBalancer] floating-subnet', 14, '~public-(', /invalid subnet regexp/, /glob/);
    expect('[LoadBalancerClass]', 15, undefined, /needs a name/, /\[LoadBalancerClass "name"\]/);
    expect(
      '[Metadata] search-order',
      18,
      'configDrive,metadataService,configDrive',
      /more than 2/,
      /configDrive,metadataService/,
    );
    // [Global] problems come in the same error.
    expect('[Global] tls-insecure', 3, 'yes', /not true or false/, /lower case/);
  });

  it('keeps the warnings when a value is fatal: a misspelt key is often why another is missing', async () => {
    const doc = parseGcfg(
      `[Global]
auth-url = https://keystone.example:5000/v3
username = ccm
password = s3cret
tenant-name = k8s
tenant-domain-name = Default
usr-domain-name = Default
[LoadBalancer]
floating-network = public
monitor-max-retries = 20
`,
      FILE,
    );
    let err: unknown;
    await ccmConfigFromGcfg(doc, ctx).catch((e: unknown) => (err = e));
    assert.ok(ConfigError.is(err), String(err));
    assert.deepEqual(
      err.problems.map((p) => p.key),
      ['[LoadBalancer] monitor-max-retries', '[Global] user-domain-name'],
    );
    assert.deepEqual(err.warnings, [
      `${FILE}:7: key "[Global] usr-domain-name": unknown key, ignored (did you mean "user-domain-name"?)`,
      `${FILE}:9: key "[LoadBalancer] floating-network": unknown key, ignored (did you mean "floating-network-id"?)`,
    ]);
    // The missing key's fix is the rename.
    assert.match(
      err.problems[1]!.fix,
      /^rename \[Global\] usr-domain-name to \[Global\] user-domain-name; or set/,
    );
  });

  it('gives the fix for a project or domain written as clouds.yaml spells it, or a domain without a project', async () => {
    const userDomainFix = async (global: string) => {
      const doc = parseGcfg(
        `[Global]\nauth-url = https://keystone.example:5000/v3\nusername = ccm\npassword = s3cret\n${global}`,
        FILE,
      );
      let err: unknown;
      await ccmConfigFromGcfg(doc, ctx).catch((e: unknown) => (err = e));
      assert.ok(ConfigError.is(err), String(err));
      const p = err.problems.find((q) => q.key === '[Global] user-domain-name');
      assert.ok(p, JSON.stringify(err.problems));
      return { fix: p.fix, warnings: err.warnings };
    };
    // OCCM's cloud.conf says tenant-name; project-name is ignored, so domain-name is taken as the scope.
    const project = await userDomainFix('project-name = k8s\ndomain-name = Default\n');
    assert.match(
      project.fix,
      /^rename \[Global\] project-name to \[Global\] tenant-name: with a project, \[Global\] domain-name is the user's domain too; or set \[Global\] user-domain-name/,
    );
    assert.deepEqual(project.warnings, [
      `${FILE}:5: key "[Global] project-name": unknown key, ignored (did you mean "tenant-name"?)`,
    ]);
    const projectId = await userDomainFix('project-id = 0123\ndomain-id = default\n');
    assert.match(
      projectId.fix,
      /^rename \[Global\] project-id to \[Global\] tenant-id: with a project, \[Global\] domain-id/,
    );
    // domain-name alone is a domain scope; the user still needs a domain.
    const alone = await userDomainFix('domain-name = Default\n');
    assert.match(
      alone.fix,
      /^set \[Global\] user-domain-name \(usually "Default"\) or \[Global\] user-domain-id: \[Global\] domain-name stands for the user's domain only together with a project \(\[Global\] tenant-name or \[Global\] tenant-id\)/,
    );
    // With tenant-name, domain-name is the user's and the project's domain: nothing to fix.
    const doc = parseGcfg(
      `[Global]\nauth-url = https://keystone.example:5000/v3\nusername = ccm\npassword = s3cret\ntenant-name = k8s\ndomain-name = Default\n`,
      FILE,
    );
    const config = await ccmConfigFromGcfg(doc, ctx);
    assert.equal(config.cloud.userDomainName, 'Default');
    assert.equal(config.cloud.projectDomainName, 'Default');
  });

  it('warns, with did-you-mean, about what OCCM would ignore silently', () => {
    const { warnings } = readCcmSections(
      parseGcfg(
        `[Global]
[LoadBalancer]
lb-methd = SOURCE_IP
use-octavia = true
lb-provider = vendor-x
container-store = vault
monitor-delay = 1500ms
floating-network-id = a
floating-network-id = b
ingress-hostname-suffix =
node-selector = role = lb
[LoadBalancr]
[Networking "x"]
[Networking]
address-sort-order = 10.0.0.0/8,not-a-cidr
public-network-name = net1
internal-network-name = net1
[Metadata]
request-timeout = 10s
[BlockStorage]
bs-version = v3
`,
        FILE,
      ),
    );
    assert.deepEqual(warnings, [
      `${FILE}:12: unknown section [LoadBalancr], ignored (did you mean [LoadBalancer]?)`,
      `${FILE}:13: [Networking "x"] is ignored: only [LoadBalancerClass "name"] takes a name; write [Networking]`,
      `${FILE}:3: key "[LoadBalancer] lb-methd": unknown key, ignored (did you mean "lb-method"?)`,
      `${FILE}:4: key "[LoadBalancer] use-octavia": ignored: removed in OCCM v1.26 (Octavia is the only load balancer service)`,
      `${FILE}:9: key "[LoadBalancer] floating-network-id": set 2 times; this last one wins`,
      `${FILE}:5: key "[LoadBalancer] lb-provider": "vendor-x" is not a provider OCCM knows (amphora, octavia, ovn, f5, amphorav2); it is passed to Octavia as is`,
      `${FILE}:6: key "[LoadBalancer] container-store": "vault" is not a container store OCCM knows (barbican, external)`,
      `${FILE}:10: key "[LoadBalancer] ingress-hostname-suffix": empty; nip.io is used`,
      `${FILE}:11: key "[LoadBalancer] node-selector": "role = lb" cannot match a node label as written (OCCM keeps the blanks around "="); write key=value without blanks`,
      `${FILE}:7: key "[LoadBalancer] monitor-delay": Octavia takes whole seconds; 1s is used`,
      `${FILE}:15: key "[Networking] address-sort-order": "not-a-cidr" is not a CIDR and is skipped (write e.g. 10.0.0.0/8)`,
      `${FILE}:16: key "[Networking] public-network-name": network "net1" is listed as both public and internal; its addresses are ExternalIP only`,
      `${FILE}:20: [BlockStorage] is ignored: the CCM does not manage volumes (the Cinder CSI driver does); remove the section`,
    ]);
  });

  it('points the ovn provider at SOURCE_IP_PORT and reports the unchecked Barbican ref', () => {
    const { sections, warnings } = readCcmSections(
      parseGcfg(
        `[LoadBalancer]
lb-provider = ovn
default-tls-container-ref = https://barbican/v1/secrets/s1
`,
        FILE,
      ),
    );
    assert.equal(sections.loadBalancer.lbMethod, 'ROUND_ROBIN');
    assert.deepEqual(warnings, [
      `${FILE}:2: key "[LoadBalancer] lb-provider": the ovn provider supports only SOURCE_IP_PORT, not ROUND_ROBIN; set lb-method = SOURCE_IP_PORT (until then SOURCE_IP_PORT is used, with a LoadBalancerLbMethodUnknown Event)`,
      `${FILE}:3: key "[LoadBalancer] default-tls-container-ref": not supported yet: the reference is not looked up in Barbican before use (OCCM does); Octavia still checks it when it creates the listener`,
    ]);
  });

  it('keeps repeated network names in order; a bare key clears the ones before, as gcfg', () => {
    const { sections } = readCcmSections(
      parseGcfg(
        `[Networking]
public-network-name = a
public-network-name
public-network-name = b
internal-network-name = c
internal-network-name = d
`,
        FILE,
      ),
    );
    assert.deepEqual(sections.networking.publicNetworkNames, ['b']);
    assert.deepEqual(sections.networking.internalNetworkNames, ['c', 'd']);
  });

  describe('[Global] secret-name / secret-namespace', () => {
    const fileWithRef = parseGcfg(
      `[Global]
secret-name = openstack-credentials
secret-namespace = kube-system
region = RegionOne
password = from-file
[Networking]
public-network-name = public
`,
      FILE,
    );
    const secretText = `[Global]
auth-url = https://keystone.example:5000/v3
username = ccm
password = from-secret
tenant-name = k8s
user-domain-name = Default
tenant-domain-name = Default
[Networking]
public-network-name = floating
`;

    it('names the Secret, from the keys or SECRET_NAME / SECRET_NAMESPACE', () => {
      assert.deepEqual(secretRefOf(fileWithRef), { namespace: 'kube-system', name: 'openstack-credentials' });
      assert.deepEqual(
        secretRefOf(parseGcfg('[Global]\nregion = r\n', FILE), { SECRET_NAME: 'c', SECRET_NAMESPACE: 'ns' }),
        { namespace: 'ns', name: 'c' },
      );
      assert.equal(secretRefOf(parseGcfg('[Global]\n', FILE)), undefined);
      const p = problem(
        problemsOf(() => secretRefOf(parseGcfg('[Global]\nsecret-name = c\n', FILE))),
        '[Global] secret-name',
      );
      assert.equal(p.file, `${FILE}:2`);
      assert.match(p.problem, /secret-namespace is not set/);
      assert.match(p.fix, /set both/);
      const env = problemsOf(() => secretRefOf(parseGcfg('[Global]\n', FILE), { SECRET_NAMESPACE: 'ns' }));
      assert.deepEqual(
        env.map((q) => [q.file, q.key]),
        [['environment', 'SECRET_NAMESPACE']],
      );
    });

    it('lays the Secret over the file: its keys win, repeated keys add up', async () => {
      const ref = secretRefOf(fileWithRef)!;
      const secret = secretConf(ref, { 'cloud.conf': secretText });
      assert.equal(secret.source, 'Secret kube-system/openstack-credentials key cloud.conf');
      const config = await ccmConfigFromGcfg(fileWithRef, ctx, { secret });
      assert.equal(config.cloud.password, 'from-secret');
      assert.equal(config.cloud.regionName, 'RegionOne');
      assert.equal(config.cloud.authUrl, 'https://keystone.example:5000/v3');
      assert.deepEqual(config.secret, ref);
      assert.deepEqual(config.networking.publicNetworkNames, ['public', 'floating']);
      // The in-tree keys are ours now: no "OCCM does not read" warning for them.
      assert.deepEqual(config.warnings, []);
    });

    it('names the Secret and its line in problems and warnings about its text', async () => {
      const ref = secretRefOf(fileWithRef)!;
      const secret = secretConf(ref, {
        'clouds.conf': `${secretText}[LoadBalancer]\nmonitor-max-retries = 20\nlb-methd = x\n[Global]\nsecret-name = other\n`,
      });
      assert.equal(secret.source, 'Secret kube-system/openstack-credentials key clouds.conf');
      const problems = await rejected(ccmConfigFromGcfg(fileWithRef, ctx, { secret }));
      assert.equal(problem(problems, '[LoadBalancer] monitor-max-retries').file, `${secret.source}:11`);

      const ok = secretConf(ref, {
        'clouds.conf': `${secretText}[LoadBalancer]\nlb-methd = x\n[Global]\nsecret-name = other\n`,
      });
      const config = await ccmConfigFromGcfg(fileWithRef, ctx, { secret: ok });
      assert.deepEqual(config.warnings, [
        `${ok.source}:13: key "[Global] secret-name": ignored inside the Secret: only the file can name a Secret`,
        `${ok.source}:11: key "[LoadBalancer] lb-methd": unknown key, ignored (did you mean "lb-method"?)`,
      ]);

      const broken = await rejected(
        ccmConfigFromGcfg(fileWithRef, ctx, { secret: { text: '[Global\n', source: secret.source } }),
      );
      assert.equal(broken[0]?.file, `${secret.source}:1`);
    });

    it('reads cloud.conf before the in-tree clouds.conf key, and says when neither is there', () => {
      const ref = { namespace: 'kube-system', name: 'creds' };
      const both = secretConf(ref, { 'cloud.conf': 'a', 'clouds.conf': 'b' });
      assert.equal(both.text, 'a');
      assert.deepEqual(both.warnings, [
        'Secret kube-system/creds: key "clouds.conf": ignored: "cloud.conf" is read instead',
      ]);
      const [p] = problemsOf(() => secretConf(ref, { other: 'x' }));
      assert.ok(p);
      assert.equal(p.file, 'Secret kube-system/creds');
      assert.equal(p.key, 'cloud.conf');
      assert.match(p.fix, /--from-file=cloud.conf/);
    });
  });
});
