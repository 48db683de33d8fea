/**
 * Where each machine's time went, to tell the controllers' slack apart from the cloud's own time
 * and from queueing behind other machines. Per machine, epoch milliseconds:
 *   created      the bench's create of its OpenStackMachine answered;
 *   acted        its OpenStackServer appeared (the machine controller's first act);
 *   resolved     the server's status.resolved written (the resolve GETs done);
 *   port         the first port's id recorded (created or adopted);
 *   volume       Cinder accepted the root volume (`creating`, from the emulator's status journal);
 *   available    Cinder made it `available`;
 *   server       Nova accepted the server (`BUILD`);
 *   active       Nova made it `ACTIVE`;
 *   noticed      the OpenStackServer ready;
 *   ready        the OpenStackMachine ready with a providerID.
 * The Kubernetes side is watched (each time is when the bench's informers saw the event), the OpenStack side
 * read from the emulator's own journal (GET /_sim/statuses). The gaps between consecutive steps
 * are either the cloud working (volume → available, server → active) or the controllers (all the
 * others: queueing, calls, noticing).
 */
import type { Informer, KubernetesObject } from '../../src/kube/index.ts';
import type { OpenStackMachine, OpenStackServer } from '../../src/capo/api/index.ts';
import type { StatusRecord } from '../../src/sim/openstack/core/status-log.ts';
import type { OpenStackClient } from '../../src/openstack/client.ts';

export const STEPS = [
  'created',
  'acted',
  'resolved',
  'port',
  'volume',
  'available',
  'server',
  'active',
  'noticed',
  'ready',
] as const;
export type Step = (typeof STEPS)[number];
type Times = Partial<Record<Step, number>>;

/** The gaps between consecutive steps, and whose time each is. */
export const GAPS: { from: Step; to: Step; cloud: boolean; what: string }[] = [
  { from: 'created', to: 'acted', cloud: false, what: 'OpenStackServer made' },
  { from: 'acted', to: 'resolved', cloud: false, what: 'resolved' },
  { from: 'resolved', to: 'port', cloud: false, what: 'port' },
  { from: 'port', to: 'volume', cloud: false, what: 'volume asked' },
  { from: 'volume', to: 'available', cloud: true, what: 'Cinder: available' },
  { from: 'available', to: 'server', cloud: false, what: 'server asked' },
  { from: 'server', to: 'active', cloud: true, what: 'Nova: ACTIVE' },
  { from: 'active', to: 'noticed', cloud: false, what: 'server noticed' },
  { from: 'noticed', to: 'ready', cloud: false, what: 'machine ready' },
];

export interface Timeline {
  /** Per machine name. */
  machines: Map<string, Times>;
}

export class TimelineRecorder {
  private readonly times = new Map<string, Times>();
  private readonly stops: (() => void)[];
  private readonly since: number;
  private readonly simUrl: string;

  private constructor(
    servers: Informer<OpenStackServer>,
    machines: Informer<OpenStackMachine>,
    simUrl: string,
    since: number,
  ) {
    this.simUrl = simUrl;
    this.since = since;
    this.stops = [
      follow(servers, (server) => {
        const name = server.metadata?.name ?? '';
        const s = server.status;
        this.mark(name, 'acted');
        if (s?.resolved) this.mark(name, 'resolved');
        if (s?.resources?.ports?.[0]?.id) this.mark(name, 'port');
        if (s?.ready === true) this.mark(name, 'noticed');
      }),
      follow(machines, (m) => {
        if (m.status?.ready === true && m.spec.providerID) this.mark(m.metadata?.name ?? '', 'ready');
      }),
    ];
  }

  /**
   * Follows the bench's own informers of the two kinds (the events as they arrive, without a
   * second watch of each: the API server would send, and the bench parse, every event twice).
   */
  static async start(
    servers: Informer<OpenStackServer>,
    machines: Informer<OpenStackMachine>,
    simUrl: string,
  ): Promise<TimelineRecorder> {
    const { last } = (await (await fetch(`${simUrl}/_sim/statuses?since=0&service=none`)).json()) as {
      last: number;
    };
    return new TimelineRecorder(servers, machines, simUrl, last);
  }

  private of(name: string): Times {
    let t = this.times.get(name);
    if (!t) this.times.set(name, (t = {}));
    return t;
  }
  private mark(name: string, step: Step): void {
    this.of(name)[step] ??= Date.now();
  }

  created(name: string): void {
    this.mark(name, 'created');
  }

  /** Stops watching; the OpenStack side from the emulator's journal, matched by the objects' names. */
  async finish(admin: OpenStackClient): Promise<Timeline> {
    for (const stop of this.stops) stop();
    const journal = (await (await fetch(`${this.simUrl}/_sim/statuses?since=${this.since}`)).json()) as {
      statuses: StatusRecord[];
    };
    const first = (id: string, status: string) =>
      journal.statuses.find((r) => r.id === id && r.status === status)?.at;
    const servers = await admin.compute.servers.list({ all_tenants: true }).all();
    const volumes = await admin.blockStorage.volumes.list({ all_tenants: true }).all();
    for (const [name, t] of this.times) {
      const server = servers.find((s) => s.name === name);
      const volume = volumes.find((v) => v.name === `${name}-root`);
      if (volume) {
        t.volume = first(volume.id, 'creating');
        t.available = first(volume.id, 'available');
      }
      if (server) {
        t.server = first(server.id, 'BUILD');
        t.active = first(server.id, 'ACTIVE');
      }
    }
    return { machines: this.times };
  }
}

/** Each added or modified object the informer sees from now on; returns the remover. */
function follow<T extends KubernetesObject>(informer: Informer<T>, seen: (obj: T) => void): () => void {
  return informer.addHandler({ onAdd: seen, onUpdate: (_old, obj) => seen(obj) });
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor((s.length - 1) / 2)]!;
};

export interface GapFigures {
  what: string;
  cloud: boolean;
  /** Median of the machines that have both ends (unscaled ms). */
  medianMs: number;
  /** How many machines had both ends. */
  n: number;
}

/**
 * The median of each gap, unscaled. A machine without a volume (control plane) skips the volume's
 * two gaps: its `available` is taken as its `port`, so the gap to the server still counts.
 */
export function gapsOf(timeline: Timeline, scale: number): GapFigures[] {
  return GAPS.map((g) => {
    const xs: number[] = [];
    for (const t of timeline.machines.values()) {
      const from = g.from === 'available' ? (t.available ?? (t.volume ? undefined : t.port)) : t[g.from];
      const to = t[g.to];
      if (from !== undefined && to !== undefined) xs.push((to - from) / scale);
    }
    return { what: g.what, cloud: g.cloud, medianMs: median(xs), n: xs.length };
  });
}

/** Per machine, the cloud's own time (volume + build) and the rest (slack and queueing), unscaled. */
export function splitOf(
  timeline: Timeline,
  scale: number,
): { cloudMs: number; restMs: number; totalMs: number } {
  const cloud: number[] = [];
  const rest: number[] = [];
  const total: number[] = [];
  for (const t of timeline.machines.values()) {
    if (t.created === undefined || t.ready === undefined || t.server === undefined || t.active === undefined)
      continue;
    const c =
      t.active -
      t.server +
      (t.volume !== undefined && t.available !== undefined ? t.available - t.volume : 0);
    const all = t.ready - t.created;
    cloud.push(c / scale);
    rest.push((all - c) / scale);
    total.push(all / scale);
  }
  return { cloudMs: median(cloud), restMs: median(rest), totalMs: median(total) };
}
