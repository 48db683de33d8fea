/**
 * The shared load-balancer path on the emulator's realistic profile (amphora-like provisioning
 * times, scaled by TIME_SCALE): for N members, the OpenStack calls and the time until Ready with
 * the floating IP, fully populated vs serial mode (provider-requires-serial-api-calls, the in-tree
 * way); then the cost of one node added, of the steady state, and of removal. The engine's backoff
 * is scaled like the cloud, so the requeue rhythm is the one a controller would have.
 * Prints a table; asserts nothing.
 *
 *   node bench/lb-service.ts                  TIME_SCALE=0.05 N=1,10,80,300 MODES=populated,serial
 */
import { LoadBalancerEngine } from '../src/openstack/services/loadbalancer/engine.ts';
import {
  calls,
  converge,
  desiredLb,
  nodeAddress,
  openLbWorld,
  teardown,
  total,
  writes,
} from '../src/openstack/services/loadbalancer/testing/fixtures.ts';
import type { DesiredLoadBalancer } from '../src/openstack/services/loadbalancer/types.ts';

const SCALE = Number(process.env.TIME_SCALE ?? 0.05);
const NS = (process.env.N ?? '1,10,80,300').split(',').map(Number);
const MODES = (process.env.MODES ?? 'populated,serial').split(',');

const world = await openLbWorld({ profile: 'realistic', overrides: { timeScale: SCALE } });
const engine = new LoadBalancerEngine(world.os, {
  backoff: { initialMs: 1_000 * SCALE, maxMs: 10_000 * SCALE, stuckAfterMs: 300_000 },
});
const sim = world.sim;

const reads = (service: 'octavia' | 'neutron') => total(calls(sim, service)) - total(writes(sim, service));

interface Row {
  mode: string;
  n: number;
  ensureCalls: number;
  octaviaWrites: number;
  octaviaReads: number;
  neutronWrites: number;
  readyMs: number;
  addNodeWrites: string;
  steadyWrites: number;
  removeMs: number;
  removeWrites: number;
}

const rows: Row[] = [];
for (const mode of MODES) {
  for (const n of NS) {
    const d = desiredLb(world, {
      name: `bench-${mode}-${n}`,
      members: n,
      monitor: true,
      serial: mode === 'serial',
    });
    sim.cloud.stats.reset();
    let t0 = performance.now();
    const run = await converge(engine, d, { maxCalls: 100_000 });
    const readyMs = performance.now() - t0;
    if (run.result.phase !== 'Ready') throw new Error(`${mode} N=${n}: ${JSON.stringify(run.result)}`);
    const row: Partial<Row> = {
      mode,
      n,
      ensureCalls: run.calls,
      octaviaWrites: total(writes(sim, 'octavia')),
      octaviaReads: reads('octavia'),
      neutronWrites: total(writes(sim, 'neutron')),
      readyMs,
    };

    const grown: DesiredLoadBalancer = {
      ...d,
      listeners: d.listeners.map((l) => ({
        ...l,
        pool: {
          ...l.pool,
          members: [...l.pool.members, { name: `node-${n}`, address: nodeAddress(n), port: 30080 }],
        },
      })),
    };
    sim.cloud.stats.reset();
    await converge(engine, grown, { maxCalls: 1_000 });
    row.addNodeWrites = Object.entries(writes(sim, 'octavia'))
      .map(
        ([op, c]) => `${c}× ${op.split(' ')[0]} ${op.includes('members') ? 'members' : op.split('/').at(-1)}`,
      )
      .join(', ');

    sim.cloud.stats.reset();
    await engine.ensure(grown);
    row.steadyWrites = total(writes(sim, 'octavia')) + total(writes(sim, 'neutron'));

    sim.cloud.stats.reset();
    t0 = performance.now();
    await teardown(engine, grown, { maxCalls: 100_000 });
    row.removeMs = performance.now() - t0;
    row.removeWrites = total(writes(sim, 'octavia')) + total(writes(sim, 'neutron'));
    rows.push(row as Row);
    console.error(`done: ${mode} N=${n}`);
  }
}

const secs = (ms: number) => (ms / 1000).toFixed(2);
console.log(`\nLoad balancer with floating IP, realistic profile × ${SCALE} (one TCP listener + monitor)\n`);
const header = [
  'mode',
  'N',
  'ensure calls',
  'Octavia writes',
  'Octavia reads',
  'Neutron writes',
  'to Ready (s)',
  `≈ unscaled (s)`,
  '+1 node: Octavia writes',
  'steady writes',
  'remove (s)',
  'remove writes',
];
const table = rows.map((r) => [
  r.mode,
  String(r.n),
  String(r.ensureCalls),
  String(r.octaviaWrites),
  String(r.octaviaReads),
  String(r.neutronWrites),
  secs(r.readyMs),
  secs(r.readyMs / SCALE),
  r.addNodeWrites,
  String(r.steadyWrites),
  secs(r.removeMs),
  String(r.removeWrites),
]);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log(line(header));
console.log(`|${widths.map((wd) => '-'.repeat(wd + 2)).join('|')}|`);
for (const row of table) console.log(line(row));

await world.close();
