/**
 * What the machine benchmarks (bench/capo-machines.ts, bench/mapo-machines.ts) measure and how
 * they print it, in one place so that their figures compare: the OpenStack emulator's accounting
 * (Keystone tokens, each service's writes and reads), the controllers' reconciles, the census of
 * what is left in the cloud, the heap, percentiles and the tables.
 */
import type { OpenStackClient } from '../../src/openstack/client.ts';
import type { Registry } from '../../src/lib/metrics.ts';
import type { StatsSnapshot } from '../../src/sim/openstack/core/stats.ts';

/* The emulator's accounting, over its admin API (admin calls are not counted). */

export async function stats(simUrl: string): Promise<StatsSnapshot> {
  return (await (await fetch(`${simUrl}/_sim/stats`)).json()) as StatsSnapshot;
}
export async function resetStats(simUrl: string): Promise<void> {
  await fetch(`${simUrl}/_sim/stats`, { method: 'DELETE' });
}

const WRITE = /^(POST|PUT|DELETE|PATCH) /;
export interface Calls {
  writes: number;
  reads: number;
  writeOps: Record<string, number>;
}
export function callsOf(snap: StatsSnapshot, service: string): Calls {
  const out: Calls = { writes: 0, reads: 0, writeOps: {} };
  for (const [op, o] of Object.entries(snap.services[service]?.operations ?? {})) {
    if (WRITE.test(op)) {
      out.writes += o.count;
      out.writeOps[op] = o.count;
    } else out.reads += o.count;
  }
  return out;
}
export const tokens = (snap: StatsSnapshot): number =>
  snap.services['keystone']?.operations['POST /v3/auth/tokens']?.count ?? 0;

/** `100× POST servers, 100× DELETE ports`: the last literal path word names the resource. */
export const describeOps = (ops: Record<string, number>): string =>
  Object.entries(ops)
    .sort(([, a], [, b]) => b - a)
    .map(([op, c]) => {
      const [method, path = ''] = op.split(' ');
      const word = path
        .split('/')
        .filter((p) => p && !p.startsWith('{'))
        .at(-1);
      return `${c}× ${method} ${word}`;
    })
    .join(', ') || '0';

/** The compute, network and block-storage calls of one phase (the machine servers' services). */
export interface ServerCalls {
  tokens: number;
  nova: Calls;
  neutron: Calls;
  cinder: Calls;
}
export const serverCallsOf = (snap: StatsSnapshot): ServerCalls => ({
  tokens: tokens(snap),
  nova: callsOf(snap, 'nova'),
  neutron: callsOf(snap, 'neutron'),
  cinder: callsOf(snap, 'cinder'),
});

/** `controller_runtime_reconcile_total` per controller (the work queues' names). */
export async function reconciles(
  registry: Pick<Registry, 'getMetricsAsJSON'>,
): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find(
    (m) => m.name === 'controller_runtime_reconcile_total',
  );
  const out: Record<string, number> = {};
  for (const v of metric?.values ?? []) {
    const c = String(v.labels['controller']);
    out[c] = (out[c] ?? 0) + v.value;
  }
  return out;
}
export const minus = (a: Record<string, number>, b: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v - (b[k] ?? 0)]));

export function heapMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

export const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

/** Servers, the machines' ports (by name: bound or not, whatever Nova did with them), volumes, trunks. */
export async function census(admin: OpenStackClient, machinePort: RegExp): Promise<Record<string, number>> {
  const servers = await admin.compute.servers.list({ all_tenants: true }).all();
  const ports = (await admin.network.ports.list().all()).filter((p) => machinePort.test(p.name ?? ''));
  const volumes = await admin.blockStorage.volumes.list({ all_tenants: true }).all();
  const trunks = await admin.network.trunks.list().all();
  return { servers: servers.length, ports: ports.length, volumes: volumes.length, trunks: trunks.length };
}
/** `2 servers, 1 ports`, or `nothing`. */
export const describeLeft = (left: Record<string, number>): string =>
  Object.entries(left)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ') || 'nothing';

/** Seconds, unscaled seconds and per-machine figures for N machines at TIME_SCALE `scale`. */
export function formats(n: number, scale: number) {
  const per = (x: number) => (x / n).toFixed(1);
  return {
    secs: (ms: number) => (ms / 1000).toFixed(1),
    unscaled: (ms: number) => (ms / 1000 / scale).toFixed(0),
    per,
    rw: (c: Calls) => `${per(c.writes)} / ${per(c.reads)}`,
  };
}

/** A Markdown table, columns padded. */
export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((wd) => '-'.repeat(wd + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
}

/** One run of N machines up and down, as the comparison table shows it. */
export interface MachinesFigures {
  /** Who made them: `mapo (MachineSet 0 → 100)`, `capo (10 workers)`. */
  label: string;
  create: ServerCalls;
  /** Reconciles per controller during the create. */
  reconciles: Record<string, number>;
  /** Until every machine was ready (capo) or Running (mapo). */
  readyMs: number;
  p50Ms: number;
  p90Ms: number;
  deleteMs: number;
  del: ServerCalls;
  left: Record<string, number>;
  heapMb: number;
}

/** The figures of several runs side by side, one row each. */
export function printComparison(n: number, scale: number, runs: MachinesFigures[]): void {
  const f = formats(n, scale);
  const total = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
  printTable(
    [
      'who',
      'Keystone tokens',
      'Nova w / r per machine',
      'Neutron w / r per machine',
      'Cinder w / r per machine',
      'reconciles per machine (all controllers)',
      'all ready (s)',
      '≈ unscaled (s)',
      'p50 / p90 ≈ unscaled (s)',
      'delete (s)',
      '≈ unscaled (s)',
      'delete: tokens, Nova / Neutron / Cinder w / r per machine',
      'left',
      'heap (MB)',
    ],
    runs.map((r) => [
      r.label,
      String(r.create.tokens),
      f.rw(r.create.nova),
      f.rw(r.create.neutron),
      f.rw(r.create.cinder),
      f.per(total(r.reconciles)),
      f.secs(r.readyMs),
      f.unscaled(r.readyMs),
      `${f.unscaled(r.p50Ms)} / ${f.unscaled(r.p90Ms)}`,
      f.secs(r.deleteMs),
      f.unscaled(r.deleteMs),
      `${r.del.tokens}, ${f.rw(r.del.nova)} · ${f.rw(r.del.neutron)} · ${f.rw(r.del.cinder)}`,
      describeLeft(r.left),
      r.heapMb.toFixed(0),
    ]),
  );
}
