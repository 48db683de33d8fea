import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../lib/config.ts';
import {
  defaultLeaderMigrationConfiguration,
  leaderMigrationFilter,
  parseLeaderMigrationConfiguration,
} from './migration.ts';

describe('KEP-2436 LeaderMigrationConfiguration', () => {
  it('parses the upstream format and defaults resourceLock to leases', () => {
    const c = parseLeaderMigrationConfiguration(`
kind: LeaderMigrationConfiguration
apiVersion: controllermanager.config.k8s.io/v1
leaderName: cloud-provider-extraction-migration
controllerLeaders:
  - name: route-controller
    component: kube-controller-manager
  - name: service-controller
    component: cloud-controller-manager
  - name: cloud-node-controller
    component: "*"
`);
    assert.equal(c.resourceLock, 'leases');
    const kcm = leaderMigrationFilter(c, 'kube-controller-manager');
    const ccm = leaderMigrationFilter(c, 'cloud-controller-manager');
    assert.deepEqual(
      ['route-controller', 'service-controller', 'cloud-node-controller', 'node-ipam-controller'].map((n) => [
        kcm(n),
        ccm(n),
      ]),
      [
        ['migrated', 'unowned'],
        ['unowned', 'migrated'],
        ['migrated', 'migrated'],
        ['nonMigrated', 'nonMigrated'],
      ],
    );
  });

  it('rejects what upstream rejects, naming the key and the fix', () => {
    const bad = (text: string): ConfigError => {
      try {
        parseLeaderMigrationConfiguration(text, 'lm.yaml');
      } catch (err) {
        assert.ok(ConfigError.is(err));
        return err;
      }
      throw new Error('accepted');
    };
    const e1 = bad(
      'kind: LeaderMigrationConfiguration\napiVersion: controllermanager.config.k8s.io/v1\nresourceLock: endpoints\n',
    );
    assert.deepEqual(e1.problems.map((p) => p.key).sort(), ['leaderName', 'resourceLock']);
    assert.match(e1.message, /leases/);
    const e2 = bad(
      'kind: LeaderMigrationConfiguration\napiVersion: controllermanager.config.k8s.io/v1\nleaderName: m\ncontrollerLeaders:\n- name: b\n',
    );
    assert.deepEqual(
      e2.problems.map((p) => p.key),
      ['controllerLeaders.0.component'],
    );
    const e3 = bad(
      'kind: LeaderMigrationConfiguration\napiVersion: controllermanager.config.k8s.io/v1\nleaderName: m\ncontrollerLeaders:\n- name: a\n  component: x\n- name: a\n  component: y\n',
    );
    assert.deepEqual(
      e3.problems.map((p) => p.key),
      ['controllerLeaders.1.name'],
    );
    assert.match(e3.message, /one migration lock only/);
  });

  it("has upstream's default (k8s.io/controller-manager config/default.go): route, service and cloud-node-lifecycle, by whoever holds the lease", () => {
    const d = defaultLeaderMigrationConfiguration();
    assert.equal(d.leaderName, 'cloud-provider-extraction-migration');
    assert.equal(d.resourceLock, 'leases');
    assert.deepEqual(
      d.controllerLeaders.map((l) => [l.name, l.component]),
      [
        ['route', '*'],
        ['service', '*'],
        ['cloud-node-lifecycle', '*'],
      ],
    );
    // The same file serves both sides: each runs them under the migration lease, cloud-node under its own.
    for (const component of ['kube-controller-manager', 'cloud-controller-manager']) {
      const filter = leaderMigrationFilter(d, component);
      assert.deepEqual(['service', 'route', 'cloud-node-lifecycle', 'cloud-node'].map(filter), [
        'migrated',
        'migrated',
        'migrated',
        'nonMigrated',
      ]);
    }
  });
});
