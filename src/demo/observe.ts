/**
 * What the progress view shows, gathered without costing either API anything: the Kubernetes
 * objects from the demo manager's caches, what OpenStack is still working on from the emulator's
 * state in this process, and the request counts both emulators keep.
 */
import type { V1Node, V1Service } from '@kubernetes/client-node';
import type { Manager } from '../kube/index.ts';
import { kinds } from '../kube/index.ts';
import {
  capoKinds,
  type Cluster,
  type Machine,
  type OpenStackCluster,
  type OpenStackMachine,
} from '../capo/api/index.ts';
import { TAINT_UNINITIALIZED } from '../ccm/node-spec.ts';
import { mapoKinds, type Machine as MachineAPIMachine } from '../mapo/api/index.ts';
import type { KindLine, ProgressState, Waiting } from './progress.ts';
import type { World } from './world.ts';

export interface Observer {
  state(): ProgressState;
  /** The OpenStack emulator's request counts per service, since the last reset. */
  openstackCalls(): Record<string, number>;
}

/** `machineAPI`: also OpenShift's Machine API Machines (their CRDs are installed). */
export function observer(world: World, demo: Manager, opts: { machineAPI?: boolean } = {}): Observer {
  const firstSeen = new Map<string, number>();
  const list = <T extends object>(type: Parameters<Manager['informers']['informerFor']>[0]) =>
    demo.informers.informerFor(type).list() as unknown as T[];

  const openstackCalls = () => {
    const out: Record<string, number> = {};
    for (const [name, s] of Object.entries(world.sim.cloud.stats.snapshot().services)) out[name] = s.count;
    return out;
  };

  const waiting = (now: number): Waiting[] => {
    const seen = new Set<string>();
    const out: Waiting[] = [];
    const note = (id: string, what: string, state: string) => {
      const key = `${id}/${state}`;
      seen.add(key);
      if (!firstSeen.has(key)) firstSeen.set(key, now);
      out.push({ what, state, since: firstSeen.get(key)! });
    };
    for (const w of openstackWork(world)) note(w.id, w.what, w.state);
    for (const key of firstSeen.keys()) if (!seen.has(key)) firstSeen.delete(key);
    return out;
  };

  return {
    openstackCalls,
    state() {
      const clusters = list<Cluster>(capoKinds.Cluster);
      const oscs = list<OpenStackCluster>(capoKinds.OpenStackCluster);
      const machines = list<Machine>(capoKinds.Machine);
      const osms = list<OpenStackMachine>(capoKinds.OpenStackMachine);
      const nodes = list<V1Node>(kinds.Node);
      const services = list<V1Service>(kinds.Service).filter((s) => s.spec?.type === 'LoadBalancer');
      const kindsShown: KindLine[] = [
        // As `kubectl get clusters,machines` shows them: CAPI's phase (here from capo acting as CAPI core).
        phaseLine('Clusters', clusters, CLUSTER_PHASES),
        line('OpenStackClusters', oscs, (c) =>
          c.metadata?.deletionTimestamp ? 'deleting' : c.status?.ready ? 'ready' : 'provisioning',
        ),
        phaseLine('Machines', machines, MACHINE_PHASES),
        line('OpenStackMachines', osms, (m) =>
          m.metadata?.deletionTimestamp
            ? 'deleting'
            : m.status?.ready
              ? 'ready'
              : (m.status?.instanceState ?? 'pending'),
        ),
        ...(opts.machineAPI
          ? [phaseLine('Machine API Machines', list<MachineAPIMachine>(mapoKinds.Machine), MACHINE_PHASES)]
          : []),
        line('Nodes', nodes, (n) =>
          (n.spec?.taints ?? []).some((t) => t.key === TAINT_UNINITIALIZED) ? 'uninitialized' : 'initialized',
        ),
        line('LoadBalancer Services', services, (s) =>
          s.metadata?.deletionTimestamp
            ? 'deleting'
            : (s.status?.loadBalancer?.ingress ?? []).length > 0
              ? 'with external IP'
              : 'pending',
        ),
      ];
      const now = performance.now();
      return {
        kinds: kindsShown,
        waiting: waiting(now),
        openstack: openstackCalls(),
        kube: world.kubeRequests(),
      };
    },
  };
}

/** CAPI's phases in lifecycle order, lower case as the view prints them. */
export const MACHINE_PHASES = ['pending', 'provisioning', 'provisioned', 'running', 'deleting', 'failed'];
export const CLUSTER_PHASES = ['pending', 'provisioning', 'provisioned', 'deleting', 'failed'];

interface Phased {
  metadata?: { deletionTimestamp?: unknown };
  status?: { phase?: string | undefined };
}

/** Cluster API objects counted by `status.phase`; a deleted one may not have had it rewritten yet. */
export function phaseLine(kind: string, items: readonly Phased[], order: string[]): KindLine {
  return line(
    kind,
    items,
    (o) => (o.metadata?.deletionTimestamp ? 'deleting' : (o.status?.phase || 'pending').toLowerCase()),
    order,
  );
}

/** Counts per phase, in `order` when given (others after, as met). */
function line<T>(kind: string, items: readonly T[], phase: (t: T) => string, order: string[] = []): KindLine {
  const counts = new Map<string, number>();
  for (const i of items) {
    const p = phase(i);
    counts.set(p, (counts.get(p) ?? 0) + 1);
  }
  const rank = (p: string) => (order.includes(p) ? order.indexOf(p) : order.length);
  return { kind, count: items.length, phases: [...counts.entries()].sort((a, b) => rank(a[0]) - rank(b[0])) };
}

interface Work {
  id: string;
  what: string;
  state: string;
}

const BUSY_VOLUME = new Set(['creating', 'attaching', 'detaching', 'deleting', 'downloading', 'extending']);

/** Servers building or being deleted, load balancers in PENDING_*, volumes in a transition. */
function openstackWork(world: World): Work[] {
  const cloud = world.sim.cloud;
  const snap = cloud.snapshot() as {
    nova?: { servers?: { servers?: { id: string; name: string; task_state?: string | null }[] } };
    octavia?: { loadbalancers?: { id: string; name: string; provisioning_status: string }[] };
    cinder?: { volumes?: { id: string; name: string | null; status: string }[] };
  };
  const out: Work[] = [];
  for (const s of snap.nova?.servers?.servers ?? []) {
    const status = cloud.compute.getServer(s.id)?.status;
    if (s.task_state === 'deleting') out.push({ id: s.id, what: `server ${s.name}`, state: 'deleting' });
    else if (status === 'BUILD') out.push({ id: s.id, what: `server ${s.name}`, state: 'BUILD' });
  }
  for (const lb of snap.octavia?.loadbalancers ?? []) {
    if (lb.provisioning_status.startsWith('PENDING_')) {
      out.push({ id: lb.id, what: `LB ${lb.name}`, state: lb.provisioning_status });
    }
  }
  for (const v of snap.cinder?.volumes ?? []) {
    if (BUSY_VOLUME.has(v.status)) out.push({ id: v.id, what: `volume ${v.name ?? v.id}`, state: v.status });
  }
  return out;
}
