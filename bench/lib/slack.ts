/**
 * Where a controller's latency goes, told apart from the machine's load: the emulator journals
 * every request (`GET /_sim/requests`) and when its Octavia worker settled a load balancer
 * (`GET /_sim/statuses`), so a phase's wall time splits into the cloud's own work (each write
 * until its load balancer settled) and the slack (everything else: the controller noticing the
 * event, noticing the settle, its calls before the next write, the bench seeing the result).
 * The event-loop lag of the run and the load average go with it: slack under a lag of the same
 * size is load, not polling.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import type { RequestRecord } from '../../src/sim/openstack/core/stats.ts';
import type { StatusRecord } from '../../src/sim/openstack/core/status-log.ts';

export interface Mark {
  requests: number;
  transitions: number;
  /** Epoch ms, as the journals' `at`. */
  t0: number;
  load: number;
  lag: ReturnType<typeof monitorEventLoopDelay>;
}

/** One write and what followed it. */
export interface WriteStep {
  operation: string;
  /** ms after t0 (wall). */
  writeAt: number;
  /** When its load balancer settled (ms after t0), if it did before the phase ended. */
  settledAt: number | undefined;
  /** The controller's first Octavia call after the settle. */
  noticedAt: number | undefined;
  /** GETs of the load balancer while it was pending (looks that found it busy). */
  earlyLooks: number;
}

export interface Timeline {
  totalMs: number;
  /** t0 → the controller's first Octavia call. */
  firstCallMs: number | undefined;
  steps: WriteStep[];
  /** Σ (settle − write): what the cloud itself took. */
  cloudMs: number;
  slackMs: number;
  lagP99Ms: number;
  lagMaxMs: number;
  load: [number, number];
}

async function journal<T>(simUrl: string, what: 'requests' | 'statuses', since: number, all = false) {
  const res = await fetch(`${simUrl}/_sim/${what}?since=${since}${all ? '' : '&service=octavia'}`);
  return (await res.json()) as { last: number; dropped: number } & Record<typeof what, T[]>;
}

/** The start of a phase: where the journals are, the time, the load, a fresh lag histogram. */
export async function mark(simUrl: string): Promise<Mark> {
  const [r, t] = await Promise.all([
    journal<RequestRecord>(simUrl, 'requests', 0),
    journal<StatusRecord>(simUrl, 'statuses', 0),
  ]);
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  return { requests: r.last, transitions: t.last, t0: Date.now(), load: loadavg()[0]!, lag };
}

const LB_GET = 'GET /v2/lbaas/loadbalancers/{loadbalancer_id}';

/** The phase that began at `m` has ended now: its timeline from the journals. */
export async function timeline(simUrl: string, m: Mark): Promise<Timeline> {
  const end = Date.now();
  m.lag.disable();
  const [{ requests }, { statuses: transitions }] = await Promise.all([
    journal<RequestRecord>(simUrl, 'requests', m.requests),
    journal<StatusRecord>(simUrl, 'statuses', m.transitions),
  ]);
  const rel = (at: number) => at - m.t0;
  if (process.env.SLACK_DUMP) {
    const everything = await journal<RequestRecord>(simUrl, 'requests', m.requests, true);
    for (const r of everything.requests)
      console.error(`  ${rel(r.at)} ms ${r.service} ${r.operation} ${r.status}`);
    for (const t of transitions) console.error(`  ${rel(t.at)} ms settled ${t.status}`);
  }
  const steps: WriteStep[] = [];
  const writes = requests.filter((r) => r.write && r.status < 300);
  for (const [i, w] of writes.entries()) {
    const settle = transitions.find((t) => t.at >= w.at);
    const nextWriteAt = writes[i + 1]?.at ?? end;
    const noticed = settle ? requests.find((r) => r.at > settle.at) : undefined;
    const earlyLooks = requests.filter(
      (r) => r.operation === LB_GET && r.at > w.at && r.at <= (settle?.at ?? nextWriteAt),
    ).length;
    steps.push({
      operation: w.operation,
      writeAt: rel(w.at),
      settledAt: settle ? rel(settle.at) : undefined,
      noticedAt: noticed ? rel(noticed.at) : undefined,
      earlyLooks,
    });
  }
  // Writes whose settle is another write's (a floating IP's Neutron calls are not journaled here) count once.
  const cloudMs = steps.reduce(
    (sum, s, i) =>
      s.settledAt === undefined || steps[i + 1]?.settledAt === s.settledAt
        ? sum
        : sum + (s.settledAt - s.writeAt),
    0,
  );
  const totalMs = end - m.t0;
  return {
    totalMs,
    firstCallMs: requests[0] ? rel(requests[0].at) : undefined,
    steps,
    cloudMs,
    slackMs: totalMs - cloudMs,
    lagP99Ms: m.lag.percentile(99) / 1e6,
    lagMaxMs: m.lag.max / 1e6,
    load: [m.load, loadavg()[0]!],
  };
}

/**
 * `first call 0.3 · PUT members 0.3→5.3 seen 5.4 (1 early) · PUT members 5.5→10.5 seen 10.6 · end 10.8`,
 * in unscaled seconds.
 */
export function describeTimeline(t: Timeline, unscale: (ms: number) => number): string {
  const s = (ms: number | undefined) => (ms === undefined ? '?' : (unscale(ms) / 1000).toFixed(2));
  const word = (op: string) => {
    const [method, path = ''] = op.split(' ');
    return `${method} ${path
      .split('/')
      .filter((p) => p && !p.startsWith('{'))
      .at(-1)}`;
  };
  return [
    `first call ${s(t.firstCallMs)}`,
    ...t.steps.map(
      (st) =>
        `${word(st.operation)} ${s(st.writeAt)}→${s(st.settledAt)} seen ${s(st.noticedAt)}` +
        (st.earlyLooks > 0 ? ` (${st.earlyLooks} early)` : ''),
    ),
    `end ${s(t.totalMs)}`,
  ].join(' · ');
}
