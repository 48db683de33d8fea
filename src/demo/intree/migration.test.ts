/**
 * Migration both ways between kube-controller-manager's in-tree provider (the stand-in) and
 * `shiftstack ccm`, with KEP-2436 leader migration on both, as upstream's guide runs it: both sides
 * enable migration, then kube-controller-manager restarts with `--cloud-provider=external` (and the
 * downgrade: back to `openstack`, then the CCM goes). Services and Nodes change all along, and the
 * judge is what happened, watched as it happened (testing/observe.ts):
 *
 * - every OpenStack write was made by the holder of the migration Lease at that moment (the
 *   emulator's journal attributes each to its maker's User-Agent);
 * - one load balancer per Service, with the same id, VIP and floating IP across the handover;
 * - no Service that had an external address was ever seen without it, no Node's addresses changed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningCcm } from '../../ccm/testing/env.ts';
import { kinds } from '../../kube/index.ts';
import { ONLY_TCP } from './load-balancer.ts';
import { CCM_UA, KCM_UA, MIGRATION_LEASE, MigrationBed } from './testing/bed.ts';
import type { RunningKcm } from './testing/env.ts';

function assertHandover(bed: MigrationBed, since: number, what: string): void {
  const writes = bed.writes(since);
  assert.ok(writes.length > 0, `${what}: the test made the controllers write`);
  assert.deepEqual(
    bed.outOfTurn(since).map((w) => `${w.caller} ${w.service} ${w.operation}`),
    [],
    `${what}: writes by a side that did not hold the migration Lease`,
  );
  assert.deepEqual(bed.observer.lostAddresses, [], 'a Service lost or changed its external address');
  assert.deepEqual(bed.observer.flaps, [], "a Node's addresses changed");
}

async function assertOneLoadBalancerEach(bed: MigrationBed, services: readonly string[]): Promise<void> {
  const names = await bed.loadBalancerNames();
  assert.equal(names.length, services.length, `one load balancer per Service: ${names.join(', ')}`);
}

describe('migration between the in-tree provider and shiftstack ccm, with leader migration', () => {
  let bed: MigrationBed;
  let inTree: RunningKcm;
  let cloud: RunningCcm;

  before(async () => {
    bed = await MigrationBed.start();
  });
  after(async () => {
    await bed?.close();
  });

  it('upgrade: the CCM adopts the in-tree load balancers (same id, VIP, floating IP) and takes the loops, never both acting', async () => {
    const since = bed.mark();
    inTree = await bed.kcm('openstack');
    for (const name of ['s1', 's2', 's3']) await bed.service(name);
    await bed.service('dns', 'UDP', 53);
    for (const name of ['s1', 's2', 's3']) await bed.served(name);
    // The in-tree provider could not serve UDP.
    await bed.until(async () => {
      const events = await bed.env.api.list(kinds.EventsV1Event, { namespace: 'default' });
      return events.items.some((e) => e.regarding?.name === 'dns' && e.note?.includes(ONLY_TCP));
    }, 'the in-tree refusal of dns');

    // The CCM with migration on: its own Lease, then it waits for the migration Lease.
    cloud = await bed.ccm();
    await bed.until(
      async () => (await bed.holder('cloud-controller-manager')) === cloud.ccm.manager.identity,
      'the CCM leads its own Lease',
    );
    assert.equal(await bed.holder(MIGRATION_LEASE), inTree.identity);
    // Changes while the in-tree side still owns the loops: a Service and a Node.
    await bed.service('s4');
    await bed.addNode();
    await bed.served('s4');
    await bed.converged(['s1', 's2', 's3', 's4']);
    const before = await bed.identities(['s1', 's2', 's3', 's4']);

    // kube-controller-manager restarts with --cloud-provider=external: the CCM takes over.
    await bed.stop(inTree);
    inTree = await bed.kcm('external');
    await bed.service('s5');
    await bed.setPort('s2', 8080);
    await bed.env.api.delete(kinds.Node, { name: 'worker-1' });
    await bed.served('s5');
    // The UDP Service the in-tree provider refused works on the CCM.
    await bed.served('dns');
    await bed.converged(['s1', 's2', 's3', 's4', 's5'], { s2: 8080 });

    assert.deepEqual(await bed.identities(['s1', 's2', 's3', 's4']), before);
    await assertOneLoadBalancerEach(bed, ['s1', 's2', 's3', 's4', 's5', 'dns']);
    assertHandover(bed, since, 'upgrade');
    assert.equal(await bed.holder(MIGRATION_LEASE), cloud.ccm.manager.identity);
    assert.deepEqual(bed.migrationHolders().slice(-2), [KCM_UA, CCM_UA]);
  });

  it('downgrade: the in-tree provider finds the load balancers again (its own by name, the CCM’s by the recorded id) and takes the loops back', async () => {
    const since = bed.mark();
    // The UDP Service cannot go back; its owner removes it first.
    await bed.deleteService('dns');
    // kube-controller-manager back to the in-tree provider, migration on: it waits for the Lease.
    await bed.stop(inTree);
    inTree = await bed.kcm('openstack');
    await bed.until(
      async () => (await bed.holder('kube-controller-manager')) === inTree.identity,
      'kube-controller-manager leads its own Lease',
    );
    await bed.service('s6');
    await bed.served('s6');
    const before = await bed.identities(['s1', 's2', 's4', 's5', 's6']);
    assert.equal(await bed.holder(MIGRATION_LEASE), cloud.ccm.manager.identity);

    // The CCM goes: kube-controller-manager takes the loops back.
    await bed.stop(cloud);
    await bed.setPort('s5', 8443);
    await bed.env.api.delete(kinds.Service, { namespace: 'default', name: 's3' });
    await bed.addNode();
    await bed.until(async () => !(await bed.get('s3').catch(() => undefined)), 's3 gone');
    await bed.converged(['s1', 's2', 's4', 's5', 's6'], { s2: 8080, s5: 8443 });

    assert.deepEqual(await bed.identities(['s1', 's2', 's4', 's5', 's6']), before);
    await assertOneLoadBalancerEach(bed, ['s1', 's2', 's4', 's5', 's6']);
    assertHandover(bed, since, 'downgrade');
    assert.equal(await bed.holder(MIGRATION_LEASE), inTree.identity);
    assert.deepEqual(bed.migrationHolders().slice(-2), [CCM_UA, KCM_UA]);
  });
});

describe('migration as rolling updates of two replicas on each side', () => {
  let bed: MigrationBed;

  before(async () => {
    bed = await MigrationBed.start();
  });
  after(async () => {
    await bed?.close();
  });

  it('rolls kube-controller-manager to external one replica at a time under two CCM replicas, then back, never two acting', async () => {
    const services = ['r1', 'r2', 'r3'];
    const since = bed.mark();
    // Two in-tree replicas (a, b), migration on; one leads.
    const kcm = [await bed.kcm('openstack', 'kcm-a'), await bed.kcm('openstack', 'kcm-b')];
    for (const name of services) await bed.service(name);
    for (const name of services) await bed.served(name);
    const before = await bed.identities(services);
    // Two CCM replicas (c, d) arrive with migration on; neither may act yet.
    const ccm = [await bed.ccm('ccm-c'), await bed.ccm('ccm-d')];
    await bed.until(async () => {
      const leader = await bed.holder('cloud-controller-manager');
      return ccm.some((c) => c.ccm.manager.identity === leader);
    }, 'a CCM replica leads its own Lease');

    // Roll kube-controller-manager: each in-tree replica replaced by an external one, in turn.
    for (const [i, old] of kcm.entries()) {
      await bed.stop(old);
      kcm[i] = await bed.kcm('external', `kcm-${i}-external`);
      await bed.setPort('r1', 9000 + i);
      await bed.addNode();
      await bed.converged(services, { r1: 9000 + i });
    }
    await bed.service('r4');
    await bed.served('r4');
    // Roll the CCM: each replica replaced by a new one, in turn.
    for (const [i, old] of ccm.entries()) {
      await bed.stop(old);
      ccm[i] = await bed.ccm(`ccm-${i}-new`);
      await bed.setPort('r2', 9100 + i);
      await bed.converged([...services, 'r4'], { r1: 9001, r2: 9100 + i });
    }
    assert.deepEqual(await bed.identities(services), before);
    await assertOneLoadBalancerEach(bed, [...services, 'r4']);
    assertHandover(bed, since, 'rolling upgrade');
    assert.ok(bed.migrationHolders().some((h) => h.endsWith(CCM_UA)));

    // And back: kube-controller-manager rolls to the in-tree provider, then the CCM replicas go.
    const back = bed.mark();
    for (const [i, old] of kcm.entries()) {
      await bed.stop(old);
      kcm[i] = await bed.kcm('openstack', `kcm-${i}-again`);
    }
    for (const c of ccm) {
      await bed.stop(c);
      await bed.setPort('r3', 9200);
      await bed.addNode();
    }
    await bed.converged([...services, 'r4'], { r1: 9001, r2: 9101, r3: 9200 });
    assert.deepEqual(await bed.identities(services), before);
    await assertOneLoadBalancerEach(bed, [...services, 'r4']);
    assertHandover(bed, back, 'rolling downgrade');
    assert.ok(bed.migrationHolders().at(-1)!.endsWith(KCM_UA));
  });
});
