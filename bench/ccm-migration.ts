/**
 * Moving a cluster's LoadBalancer Services between kube-controller-manager's in-tree provider (the
 * stand-in, src/demo/intree) and `shiftstack ccm`, with leader migration on both sides, on the
 * OpenStack emulator's realistic profile (amphora-like times, scaled by TIME_SCALE). N Services are
 * made in-tree first; then, for the upgrade (kube-controller-manager restarted with
 * `--cloud-provider=external`) and the downgrade (back to `openstack`, then the CCM stopped):
 *
 * - handover gap: from the old side's release of the migration Lease to the new side's acquisition,
 *   and from the old side's last Octavia call to the new side's first (no controller acting);
 * - writes caused by the migration: the new side's Octavia and Neutron writes while nothing changes
 *   (goal 0 for load balancers already right), by operation;
 * - time to migrate: from the release to every Service's load balancer looked at by the new side
 *   (upgrade: each Service carries the CCM's load-balancer-id annotation; downgrade: each load
 *   balancer read by the stand-in).
 *
 * The handover gaps are real time: they are made of the Lease retry period (100 ms here, upstream's
 * default 2 s), the new side's start of its migrated controllers and its first look at the cloud.
 * The time to migrate is shown measured, and unscaled (÷ TIME_SCALE) for what part of it is cloud
 * work. With nothing to write to the cloud it is bound by the new side's Kubernetes client instead
 * (the ccm's one patch per Service at QPS 20, burst 30, upstream's default --kube-api-qps), which
 * is real time: then the measured figure is the one that holds. Prints; asserts nothing.
 *
 *   node --expose-gc bench/ccm-migration.ts     TIME_SCALE=0.02 N=100 NODES=3
 */
import { Annotation } from '../src/ccm/service/annotations.ts';
import { MIGRATION_LEASE, MigrationBed } from '../src/demo/intree/testing/bed.ts';
import { turnsOf } from '../src/demo/intree/testing/observe.ts';
import type { RequestRecord } from '../src/sim/openstack/core/stats.ts';

const SCALE = Number(process.env.TIME_SCALE ?? 0.02);
const N = Number(process.env.N ?? 100);
const NODES = Number(process.env.NODES ?? 3);
/** Services the in-tree side builds at once while the bed is set up (not measured; KCM's default is 1). */
const SETUP_SYNCS = Number(process.env.SETUP_SYNCS ?? 20);

const bed = await MigrationBed.start({
  nodes: NODES,
  cloud: { profile: 'realistic', overrides: { timeScale: SCALE } },
  timeScale: SCALE,
  waitMs: Math.max(600_000, 30_000_000 * SCALE),
});
const names = Array.from({ length: N }, (_, i) => `svc-${i}`);
const ccmDeps = { serviceBackoff: { initialMs: 1_000 * SCALE, maxMs: 10_000 * SCALE } };
const unscaled = (ms: number) => `${(ms / SCALE / 1000).toFixed(1)} s`;
const fmt = (ms: number) => `${ms.toFixed(0)} ms (${unscaled(ms)} unscaled)`;

function byOperation(writes: readonly RequestRecord[]): string {
  const counts = new Map<string, number>();
  for (const w of writes)
    counts.set(`${w.service} ${w.operation}`, (counts.get(`${w.service} ${w.operation}`) ?? 0) + 1);
  return [...counts].map(([op, c]) => `${c}× ${op}`).join(', ') || 'none';
}

interface Handover {
  gapLeaseMs: number;
  gapCallsMs: number;
  writes: RequestRecord[];
  migrateMs: number;
}

/**
 * `leave` makes the old side let go; `done` says when the new side has looked at every Service.
 * Measured from the journal and the observed Lease turns, so nothing here depends on polling speed
 * except `migrateMs`'s end.
 */
async function handover(
  oldCaller: string,
  newCaller: string,
  leave: () => Promise<void>,
  done: (since: number) => Promise<boolean> | boolean,
): Promise<Handover> {
  const since = bed.mark();
  await leave();
  await bed.until(async () => await done(since), 'every Service migrated');
  const end = Date.now();
  const turns = turnsOf(bed.observer, MIGRATION_LEASE);
  const newTurn = turns.findLast((t) => bed.callerOf.get(t.holder) === newCaller)!;
  const oldTurn = turns.findLast((t) => bed.callerOf.get(t.holder) === oldCaller && t.from < newTurn.from)!;
  const journal = bed.env.sim.cloud.stats.requests(0, { service: 'octavia' }).requests;
  const lastOld = journal.findLast((r) => r.caller === oldCaller && r.at <= newTurn.from);
  const firstNew = journal.find((r) => r.caller === newCaller && r.at >= newTurn.from);
  return {
    gapLeaseMs: newTurn.from - oldTurn.to,
    gapCallsMs: (firstNew?.at ?? NaN) - (lastOld?.at ?? NaN),
    writes: bed.writes(since).filter((w) => w.caller === newCaller),
    migrateMs: end - oldTurn.to,
  };
}

function report(what: string, h: Handover): void {
  console.log(`\n${what}`);
  // Lease timing is not scaled (the retry period is real time), so the gaps are shown as measured.
  console.log(`  handover gap (migration Lease released → acquired): ${h.gapLeaseMs.toFixed(0)} ms`);
  console.log(
    `  handover gap (last Octavia call of the old side → first of the new): ${h.gapCallsMs.toFixed(0)} ms`,
  );
  console.log(`  writes caused by the migration: ${h.writes.length} (${byOperation(h.writes)})`);
  console.log(`  time to migrate ${N} Services: ${fmt(h.migrateMs)}`);
}

try {
  const t0 = performance.now();
  let kcm = await bed.kcm('openstack', '', { concurrentServiceSyncs: SETUP_SYNCS });
  for (const name of names) await bed.service(name);
  for (const name of names) await bed.served(name);
  console.log(
    `setup: ${N} Services, ${NODES} Nodes, made in-tree with --concurrent-service-syncs=${SETUP_SYNCS}: ${fmt(performance.now() - t0)}`,
  );

  // The CCM joins with migration on; kube-controller-manager restarts external.
  const ccm = await bed.ccm('', ccmDeps);
  await bed.until(
    async () => (await bed.holder('cloud-controller-manager')) === ccm.ccm.manager.identity,
    'the CCM leads its own Lease',
  );
  const ccmCaller = bed.callerOf.get(ccm.ccm.manager.identity!)!;
  const kcmCaller = bed.callerOf.get(kcm.identity!)!;
  const up = await handover(
    kcmCaller,
    ccmCaller,
    async () => {
      await bed.stop(kcm);
      kcm = await bed.kcm('external');
    },
    async () => {
      for (const name of names)
        if (!(await bed.get(name)).metadata?.annotations?.[Annotation.LoadBalancerId]) return false;
      return true;
    },
  );
  report('upgrade: in-tree → shiftstack ccm', up);

  // Back: kube-controller-manager in-tree with migration (it waits), then the CCM goes.
  await bed.stop(kcm);
  kcm = await bed.kcm('openstack');
  await bed.until(
    async () => (await bed.holder('kube-controller-manager')) === kcm.identity,
    'kube-controller-manager leads its own Lease',
  );
  const lbs = await bed.env.os.loadBalancer.loadBalancers.list().all();
  const back = await handover(
    ccmCaller,
    bed.callerOf.get(kcm.identity!)!,
    () => bed.stop(ccm),
    (since) =>
      // The stand-in has read each load balancer (by id or by name) since it was let in.
      bed.env.sim.cloud.stats
        .requests(since, { service: 'octavia', caller: bed.callerOf.get(kcm.identity!)! })
        .requests.filter((r) => r.operation.startsWith('GET /v2/lbaas/loadbalancers')).length >= lbs.length,
  );
  report('downgrade: shiftstack ccm → in-tree', back);
  const violations = bed.observer.lostAddresses.length + bed.observer.flaps.length;
  console.log(
    `\nobserved: ${bed.observer.lostAddresses.length} lost Service addresses, ${bed.observer.flaps.length} Node address changes, ${(await bed.loadBalancerNames()).length} load balancers for ${N} Services${violations ? ' (!)' : ''}`,
  );
} finally {
  await bed.close();
}
