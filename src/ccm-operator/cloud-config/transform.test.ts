import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cloudConfigSource } from './source.ts';
import { transformCloudConfig, type TransformResult } from './transform.ts';

const where = 'openshift-config/cloud-provider-config key config';
const openstack = (source: string, platformStatus: Record<string, unknown> = {}) =>
  transformCloudConfig(source, {
    platformStatus: { type: 'OpenStack', ...platformStatus },
    featureGates: [],
    where,
  });

function text(r: TransformResult): string {
  assert.ok(r.ok, r.ok ? '' : `${r.problem.problem}; ${r.problem.fix}`);
  return r.text;
}

describe('the OpenStack cloud config transform', () => {
  it('turns the installer’s legacy config into the external CCM’s, byte for byte', () => {
    const legacy = [
      '[Global]',
      'secret-name = openstack-credentials',
      'secret-namespace = kube-system',
      'region = regionOne',
      'ca-file = /etc/kubernetes/static-pod-resources/configmaps/cloud-config/ca-bundle.pem',
      '',
      '[BlockStorage]',
      'bs-version = v3',
      '',
      '[LoadBalancer]',
      'use-octavia = True',
      '',
    ].join('\n');
    assert.equal(
      text(openstack(legacy)),
      [
        '[Global]',
        'region = regionOne',
        'ca-file = /etc/kubernetes/static-pod-resources/configmaps/cloud-config/ca-bundle.pem',
        'use-clouds = true',
        'clouds-file = /etc/openstack/secret/clouds.yaml',
        'cloud = openstack',
        '',
        '[LoadBalancer]',
        'max-shared-lb = 1',
        'manage-security-groups = true',
        '',
      ].join('\n'),
    );
  });

  it('keeps the admin’s comments, quoting and LoadBalancer choices; forces clouds.yaml', () => {
    const source = [
      '# managed by the platform team',
      '[Global]',
      'use-clouds = false ; we used to pass a password here',
      'cloud = "old cloud"',
      '',
      '[LoadBalancer]',
      '; one LB per Service is too many for our quota',
      'max-shared-lb = 5',
      'manage-security-groups = false',
      'floating-network-id = "3f1c…"',
      '',
      '[LoadBalancerClass "internal"]',
      'subnet-id = 9d2e',
      '',
    ].join('\n');
    assert.equal(
      text(openstack(source)),
      [
        '# managed by the platform team',
        '[Global]',
        'use-clouds = true ; we used to pass a password here',
        'cloud = openstack',
        'clouds-file = /etc/openstack/secret/clouds.yaml',
        '',
        '[LoadBalancer]',
        '; one LB per Service is too many for our quota',
        'max-shared-lb = 5',
        'manage-security-groups = false',
        'floating-network-id = "3f1c…"',
        '',
        '[LoadBalancerClass "internal"]',
        'subnet-id = 9d2e',
        '',
      ].join('\n'),
    );
  });

  it('makes a whole config from an empty one', () => {
    assert.equal(
      text(openstack('')),
      [
        '[Global]',
        'use-clouds = true',
        'clouds-file = /etc/openstack/secret/clouds.yaml',
        'cloud = openstack',
        '',
        '[LoadBalancer]',
        'max-shared-lb = 1',
        'manage-security-groups = true',
        '',
      ].join('\n'),
    );
  });

  it('is idempotent: the output transformed again is the same', () => {
    const once = text(openstack('[Global]\nsecret-name = openstack-credentials\n[BlockStorage]\nx = 1\n'));
    assert.equal(text(openstack(once)), once);
  });

  it('matches names without regard to case, as gcfg does', () => {
    const out = text(
      openstack(
        '[global]\nSecret-Name = openstack-credentials\n[loadbalancer]\nUse-Octavia = true\nMax-Shared-LB = 2\n',
      ),
    );
    assert.equal(
      out,
      '[global]\nuse-clouds = true\nclouds-file = /etc/openstack/secret/clouds.yaml\ncloud = openstack\n[loadbalancer]\nMax-Shared-LB = 2\nmanage-security-groups = true\n',
    );
  });

  it('refuses legacy settings it cannot drop, naming the key, the value and the fix', () => {
    const cases: [string, RegExp, RegExp][] = [
      [
        '[Global]\nsecret-name = my-creds\n',
        /\[Global\] secret-name is set to a non-default value \("my-creds", line 2\)/,
        /set secret-name = openstack-credentials in openshift-config\/cloud-provider-config key config, or remove the line/,
      ],
      [
        '[Global]\nsecret-namespace = openstack\n',
        /secret-namespace .*"openstack"/,
        /secret-namespace = kube-system/,
      ],
      [
        '[Global]\nkubeconfig-path = /etc/kubernetes/kubeconfig\n',
        /kubeconfig-path/,
        /remove kubeconfig-path/,
      ],
    ];
    for (const [source, problem, fix] of cases) {
      const r = openstack(source);
      assert.ok(!r.ok, source);
      assert.match(r.problem.problem, problem);
      assert.match(r.problem.fix, fix);
    }
  });

  it('refuses text gcfg cannot read, with the line', () => {
    const r = openstack('[Global\nregion = x\n');
    assert.ok(!r.ok);
    assert.match(
      r.problem.problem,
      /not valid gcfg\/INI: openshift-config\/cloud-provider-config key config:1/,
    );
  });
});

describe('the other platforms’ transforms', () => {
  const run = (
    type: string,
    source: string,
    extra: Record<string, unknown> = {},
    featureGates: string[] = [],
  ) => transformCloudConfig(source, { platformStatus: { type, ...extra }, featureGates, where });

  it('AWS: the Shared health probe mode unless set, managed NLB security groups with the gate', () => {
    assert.equal(text(run('AWS', '')), '[Global]\nClusterServiceLoadBalancerHealthProbeMode = Shared\n');
    assert.equal(
      text(run('AWS', '[Global]\nzone = us-east-1a\n', {}, ['AWSServiceLBNetworkSecurityGroup'])),
      '[Global]\nzone = us-east-1a\nClusterServiceLoadBalancerHealthProbeMode = Shared\nNLBSecurityGroupMode = Managed\n',
    );
    const own = '[Global]\nclusterserviceloadbalancerhealthprobemode = ServiceNodePort\n';
    assert.equal(text(run('AWS', own)), own);
  });

  it('Azure: the Infrastructure’s cloud, a standard VM type unless set, the shared health probe', () => {
    assert.equal(
      text(
        run('Azure', '{"tenantId":"t","vmType":"vmss"}', { azure: { cloudName: 'AzureUSGovernmentCloud' } }),
      ),
      '{"tenantId":"t","vmType":"vmss","cloud":"AzureUSGovernmentCloud","clusterServiceLoadBalancerHealthProbeMode":"shared"}',
    );
    assert.equal(
      text(run('Azure', '{"Cloud":"azurepubliccloud"}')),
      '{"Cloud":"AzurePublicCloud","vmType":"standard","clusterServiceLoadBalancerHealthProbeMode":"shared"}',
    );
    const conflict = run('Azure', '{"cloud":"AzureChinaCloud"}');
    assert.ok(!conflict.ok);
    assert.match(conflict.problem.problem, /"AzureChinaCloud" but the Infrastructure says AzurePublicCloud/);
    assert.ok(!run('Azure', 'not json').ok);
    assert.ok(!run('Azure', '{}', { azure: { cloudName: 'Mars' } }).ok);
    // Azure Stack Hub is copied.
    assert.equal(text(run('Azure', 'x', { azure: { cloudName: 'AzureStackCloud' } })), 'x');
  });

  it('GCP, IBMCloud, PowerVS, Nutanix and VSphere: copied as they are', () => {
    for (const type of ['GCP', 'IBMCloud', 'PowerVS', 'Nutanix', 'VSphere']) {
      assert.equal(
        text(run(type, '[global]\nproject-id = p ; kept\n')),
        '[global]\nproject-id = p ; kept\n',
        type,
      );
    }
  });
});

describe('the source ConfigMap', () => {
  it('takes cloud.conf first, else the Infrastructure’s key, keeping the other keys', () => {
    assert.deepEqual(
      cloudConfigSource({ 'cloud.conf': 'a', config: 'b', 'ca-bundle.pem': 'c' }, 'config', where),
      {
        text: 'a',
        rest: { config: 'b', 'ca-bundle.pem': 'c' },
      },
    );
    assert.deepEqual(cloudConfigSource({ config: 'b', 'ca-bundle.pem': 'c' }, 'config', where), {
      text: 'b',
      rest: { 'ca-bundle.pem': 'c' },
    });
    assert.deepEqual(cloudConfigSource(undefined, undefined, where), { text: '', rest: {} });
  });

  it('names a missing key and the fix', () => {
    const p = cloudConfigSource({ other: 'x' }, 'config', where);
    assert.ok('problem' in p);
    assert.match(
      p.problem,
      /the key config that Infrastructure cluster names \(spec\.cloudConfig\.key\) is not in/,
    );
  });
});
