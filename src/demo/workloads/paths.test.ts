import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PodPaths } from './paths.ts';

describe('PodPaths: mount paths moved under the pod root', () => {
  const p = new PodPaths('/pods/p1', ['/etc/openstack/config', '/etc/openstack', '/etc/kubernetes/']);
  it('rewrites args, env values and config text; the longest mount path wins', () => {
    assert.equal(
      p.rewrite('--cloud-config=/etc/openstack/config/cloud.conf'),
      '--cloud-config=/pods/p1/etc/openstack/config/cloud.conf',
    );
    assert.equal(
      p.rewrite('clouds-file = /etc/openstack/secret/clouds.yaml'),
      'clouds-file = /pods/p1/etc/openstack/secret/clouds.yaml',
    );
    assert.equal(p.rewrite('/etc/kubernetes'), '/pods/p1/etc/kubernetes');
    assert.equal(
      p.rewrite('a:/etc/kubernetes/x,"/etc/openstack"'),
      'a:/pods/p1/etc/kubernetes/x,"/pods/p1/etc/openstack"',
    );
  });
  it('leaves paths that only share a prefix, or sit inside another path, alone', () => {
    assert.equal(p.rewrite('/etc/openstackish/x'), '/etc/openstackish/x');
    assert.equal(p.rewrite('/opt/etc/openstack/x'), '/opt/etc/openstack/x');
    assert.equal(p.rewrite('http://host/etc/openstack'), 'http://host/etc/openstack');
  });
});
