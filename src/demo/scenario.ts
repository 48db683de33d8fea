/**
 * The demo as a list of named steps, each with a time budget (scaled with the cloud, plus slack
 * for a loaded machine) and an AbortSignal, each logging what it showed:
 *
 *   key pair → cluster → machines and their Nodes → a LoadBalancer Service → (the handover of
 *   the cloud loops) → one more worker → OpenShift's Machine API: a worker MachineSet, scaled,
 *   one Machine moved to Cluster API and back (machine-api.ts)
 *   (--once:) → delete the Service → delete the MachineSet → delete the machines → delete the
 *   cluster → leak check
 *
 * Waits read the demo manager's caches, so waiting costs the API server nothing. A failed step
 * stops the scenario; with --once the teardown and the leak check still run, so a failure never
 * leaves a question about what was left behind.
 */
import type { V1Service } from '@kubernetes/client-node';
import { isNotFound, kinds, type KubernetesObject, type ResourceType } from '../kube/index.ts';
import {
  capoKinds,
  type Cluster,
  type Machine,
  type OpenStackCluster,
  type OpenStackMachine,
} from '../capo/api/index.ts';
import { TAINT_UNINITIALIZED } from '../ccm/node-spec.ts';
import { createLogger, type Logger } from '../lib/log.ts';
import { describeCensus, leaks, takeCensus, type Census } from './census.ts';
import type { Controllers } from './controllers.ts';
import {
  anotherWorker,
  applyObjects,
  countMachines,
  fillCredentials,
  loadClusterManifest,
  type ClusterManifest,
} from './manifest.ts';
import { seconds, type Progress } from './progress.ts';
import type { World } from './world.ts';
import { legacyLoadBalancerName } from '../ccm/naming.ts';
import { machineApiSteps, machineApiTeardown, type MachineApiState } from './machine-api.ts';
import { kuryrSteps, kuryrTeardown, trunkWorkers, type KuryrDemoState } from './kuryr.ts';
import { handoverSteps, KCM_CALLER, LB_ID_ANNOTATION, UDP_SERVICE, type HandoverState } from './handover.ts';
import {
  deleteIgnoringMissing,
  lbIdByName,
  lbMembers,
  membersPuts,
  mustHave,
  octaviaWritesBy,
  openstackCalls,
  until,
} from './waits.ts';

export const KEY_NAME = 'capo-demo';
export const SERVICE = { namespace: 'default', name: 'demo-web' } as const;
/** Slack on every step's budget for a loaded machine (the budgets themselves scale with the cloud). */
const SLACK_MS = 60_000;

export interface Step {
  name: string;
  /** Unscaled: what the step takes on a real cloud, with room. */
  budgetMs: number;
  /** Runs even after a failed step (teardown, leak check). */
  always?: boolean;
  run(signal: AbortSignal): Promise<string>;
}

export interface ScenarioOptions {
  world: World;
  controllers: Controllers;
  progress: Progress;
  once: boolean;
  signal: AbortSignal;
  /** Where the controllers the scenario starts itself log (the kuryr controller); silent without. */
  log?: Logger;
}

export interface ScenarioResult {
  ok: boolean;
  failures: string[];
  /** The step that was running (or next) when the stop signal came; the rest did not run. */
  interrupted?: string;
  /** The emulator's request counts per service up to the leak check (whose census is the demo's own). */
  openstackCalls?: Record<string, number>;
}

/** The objects the scenario made and read back, shared between steps. */
interface State extends HandoverState, MachineApiState, KuryrDemoState {
  manifest?: ClusterManifest;
  census?: Census;
  openstackCalls?: Record<string, number>;
}

export async function runScenario(opts: ScenarioOptions): Promise<ScenarioResult> {
  const state: State = { service: SERVICE };
  const steps = buildSteps(opts, state);
  const result: ScenarioResult = { ok: true, failures: [] };
  const { progress, world, controllers } = opts;
  if (!controllers.capo) throw new Error('the scenario needs capo running');
  for (const step of steps) {
    if (!result.ok && !step.always) continue;
    if (opts.signal.aborted) {
      result.ok = false;
      result.interrupted ??= step.name;
      break;
    }
    const budget = Math.round(step.budgetMs * world.timeScale) + SLACK_MS;
    const signal = AbortSignal.any([opts.signal, AbortSignal.timeout(budget)]);
    progress.begin(step.name);
    try {
      const detail = await Promise.race([step.run(signal), controllers.failed]);
      progress.done(detail);
    } catch (err) {
      result.ok = false;
      if (opts.signal.aborted) {
        // Stopped by the user, not failed: said once, by the caller.
        result.interrupted = step.name;
        progress.log('  ✗ interrupted');
        break;
      }
      const why = signal.aborted && !opts.signal.aborted ? `timed out after ${seconds(budget)}: ` : '';
      const message = `${step.name}: ${why}${(err as Error).message}`;
      result.failures.push(message);
      progress.log(`  ✗ ${why}${(err as Error).message}`);
    }
  }
  if (state.openstackCalls) result.openstackCalls = state.openstackCalls;
  return result;
}

export function buildSteps(opts: ScenarioOptions, state: State): Step[] {
  const { world, controllers } = opts;
  const demo = controllers.demo;
  const api = world.api;
  const cached = <T extends KubernetesObject>(type: ResourceType<T>): T[] =>
    demo.informers.informerFor(type).list();

  const inTree = controllers.migration !== undefined;
  const steps: Step[] = [
    {
      name: `user set-up: key pair ${KEY_NAME} in the demo project; census of the cloud`,
      budgetMs: 10_000,
      always: true,
      async run(signal) {
        await world.demo.compute.keypairs.create({ name: KEY_NAME }, { signal }).catch((err: unknown) => {
          // A key pair left by an interrupted earlier run on a saved cloud is the user's: keep it.
          if ((err as { status?: number }).status !== 409) throw err;
        });
        state.census = await takeCensus(world.admin, signal);
        // The census is the demo's own doing: the count shown from here on is the controllers'.
        world.sim.cloud.stats.reset();
        return `the cloud holds ${describeCensus(state.census)}`;
      },
    },
    {
      name: 'create the cluster from examples/capo/cluster.yaml (network, router, security groups, API load balancer, bastion)',
      budgetMs: 120_000,
      async run(signal) {
        const m = await loadClusterManifest();
        fillCredentials(m, (cloud) => world.cloudsYaml(cloud));
        if (controllers.kuryr) trunkWorkers(m);
        state.manifest = m;
        await ensureNamespace(world, m.namespace, signal);
        await applyObjects(
          api,
          m.objects.filter((o) => o.kind !== 'Machine' && o.kind !== 'OpenStackMachine'),
          signal,
        );
        const osc = await until(signal, `OpenStackCluster ${m.clusterName} ready with its bastion`, () => {
          const c = cached<OpenStackCluster>(capoKinds.OpenStackCluster).find(
            (x) => x.metadata?.name === m.clusterName,
          );
          const cl = cached<Cluster>(capoKinds.Cluster).find((x) => x.metadata?.name === m.clusterName);
          return c?.status?.ready && c.status.bastion?.floatingIP && cl?.status?.phase === 'Provisioned'
            ? c
            : undefined;
        });
        const s = osc.status!;
        const subnet = s.network?.subnets?.[0];
        const endpoint = osc.spec.controlPlaneEndpoint;
        return (
          `cluster ${m.clusterName} ready: network ${s.network?.name ?? '?'}` +
          `${subnet ? ` (${subnet.cidr})` : ''}, router ${s.router?.name ?? '?'}, ` +
          `API endpoint ${endpoint?.host ?? '?'}:${endpoint?.port ?? '?'} (load balancer ` +
          `${s.apiServerLoadBalancer?.name ?? 'none'}), bastion ${s.bastion?.name ?? '?'} at ${s.bastion?.floatingIP}`
        );
      },
    },
    {
      name: inTree
        ? 'create the machines; each Node registers as its server turns ACTIVE, its kubelet (--cloud-provider=openstack) setting providerID and addresses'
        : 'create the machines; each Node registers as its server turns ACTIVE and the ccm initializes it',
      budgetMs: 120_000,
      async run(signal) {
        const m = mustHave(state.manifest, 'the cluster step did not run');
        const { controlPlane, workers } = countMachines(m);
        await applyObjects(
          api,
          m.objects.filter((o) => o.kind === 'Machine' || o.kind === 'OpenStackMachine'),
          signal,
        );
        const total = controlPlane + workers;
        const reported = new Set<string>();
        await until(signal, `${total} machines running and ${total} Nodes initialized`, () => {
          for (const n of cached(kinds.Node)) {
            const name = n.metadata?.name ?? '';
            if (reported.has(name) || !initialized(n)) continue;
            reported.add(name);
            const ip = n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
            opts.progress.log(`  node ${name} initialized: ${n.spec?.providerID} ${ip ?? ''}`);
          }
          const running = cached<Machine>(capoKinds.Machine).filter(machineRunning).length;
          const nodes = cached(kinds.Node).filter(initialized);
          const cluster = cached<Cluster>(capoKinds.Cluster).find((c) => c.metadata?.name === m.clusterName);
          return running >= total && nodes.length >= total && cluster?.status?.controlPlaneReady;
        });
        return (
          `${total} machines running (${controlPlane} control plane, ${workers} workers), ` +
          `${total} nodes initialized by ${inTree ? 'their kubelets (in-tree provider)' : 'the ccm'}`
        );
      },
    },
    {
      name: inTree
        ? `create Service ${SERVICE.namespace}/${SERVICE.name} of type LoadBalancer; the in-tree provider builds its load balancer call by call`
        : `create Service ${SERVICE.namespace}/${SERVICE.name} of type LoadBalancer and wait for its external IP`,
      budgetMs: inTree ? 180_000 : 90_000,
      async run(signal) {
        const since = world.sim.cloud.stats.requests(0, { service: 'none' }).last;
        await api.create(
          kinds.Service,
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { ...SERVICE, labels: { app: SERVICE.name } },
            spec: {
              type: 'LoadBalancer',
              selector: { app: SERVICE.name },
              ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }],
            },
          },
          { signal },
        );
        const svc = await until(signal, `an external IP on ${SERVICE.name}`, () => {
          const s = cached<V1Service>(kinds.Service).find((x) => x.metadata?.name === SERVICE.name);
          return s?.status?.loadBalancer?.ingress?.[0]?.ip ? s : undefined;
        });
        state.externalIP = svc.status!.loadBalancer!.ingress![0]!.ip!;
        // The in-tree provider records no id: its load balancer is found by its legacy name.
        state.loadBalancerId = inTree
          ? lbIdByName(world, legacyLoadBalancerName(svc.metadata?.uid ?? ''))
          : svc.metadata?.annotations?.[LB_ID_ANNOTATION];
        const lb = state.loadBalancerId ? lbMembers(world, state.loadBalancerId) : undefined;
        const writes = inTree ? ` in ${octaviaWritesBy(world, KCM_CALLER, since)} Octavia writes` : '';
        return (
          `Service ${SERVICE.name}: external IP ${state.externalIP}` +
          (lb
            ? ` (load balancer ${lb.name}${writes}, ${lb.pools.map((p) => `${p.members} members`).join(', ')})`
            : '')
        );
      },
    },
    {
      name: 'scale the workers from 2 to 3 (one more Machine and OpenStackMachine, as a MachineSet would)',
      budgetMs: 90_000,
      async run(signal) {
        const m = mustHave(state.manifest, 'the cluster step did not run');
        const lbIds = [
          mustHave(state.loadBalancerId, 'the Service has no load balancer id'),
          ...(state.udpLoadBalancerId ? [state.udpLoadBalancerId] : []),
        ];
        const want = new Map(lbIds.map((id) => [id, (lbMembers(world, id)?.pools[0]?.members ?? 0) + 1]));
        const putsBefore = membersPuts(world);
        const objects = anotherWorker(m);
        const name = objects[0]!.metadata!.name!;
        await applyObjects(api, objects, signal);
        const wanted = [...new Set(want.values())].join(' or ');
        await until(
          signal,
          `node ${name} initialized, its Machine running, ${wanted} members in every pool`,
          () => {
            const node = cached(kinds.Node).find((n) => n.metadata?.name === name);
            const machine = cached<Machine>(capoKinds.Machine).find((x) => x.metadata?.name === name);
            return (
              node &&
              initialized(node) &&
              machine &&
              machineRunning(machine) &&
              lbIds.every((id) => {
                const lb = lbMembers(world, id);
                return (
                  lb?.status === 'ACTIVE' &&
                  lb.pools.length > 0 &&
                  lb.pools.every((p) => p.members === want.get(id))
                );
              })
            );
          },
        );
        const pools = lbIds.reduce((n, id) => n + (lbMembers(world, id)?.pools.length ?? 0), 0);
        const puts = membersPuts(world) - putsBefore;
        if (puts !== pools) {
          throw new Error(`expected one batch member PUT per pool (${pools}), saw ${puts}`);
        }
        const lbs =
          lbIds.length === 1 ? "the Service's load balancer" : `the ${lbIds.length} Services' load balancers`;
        return (
          `node ${name} initialized by the ccm; ${lbs} got ${puts} batch member PUT${puts === 1 ? '' : 's'} ` +
          `for ${pools} pool${pools === 1 ? '' : 's'} (one per pool), ${wanted} members now`
        );
      },
    },
  ];
  const [beforeScale, scale] = [steps.slice(0, -1), steps.slice(-1)];
  const machineApi = controllers.mapo ? machineApiSteps(world, controllers, state, cached) : [];
  const kuryr = controllers.kuryr
    ? kuryrSteps(world, state, cached, {
        log: (opts.log ?? createLogger({ level: 'silent' })).child({ component: 'kuryr' }),
        clusterName: () => mustHave(state.manifest, 'the cluster step did not run').clusterName,
        addManager: (name, manager) => controllers.addManager(name, manager),
      })
    : [];
  const all = [
    ...(inTree ? [...beforeScale, ...handoverSteps(opts, state), ...scale, ...machineApi] : steps),
    ...kuryr,
  ];
  if (!opts.once) return all;
  return [...all, ...teardown(opts, state, cached)];
}

function teardown(
  opts: ScenarioOptions,
  state: State,
  cached: <T extends KubernetesObject>(type: ResourceType<T>) => T[],
): Step[] {
  const { world } = opts;
  const api = world.api;
  return [
    // First: the pods' ports are subports of the workers' trunks, released before the machines go.
    ...(opts.controllers.kuryr ? [kuryrTeardown(world, state, cached)] : []),
    {
      name: `teardown: delete the Services (the ccm deletes their load balancers and floating IPs)`,
      budgetMs: 60_000,
      always: true,
      async run(signal) {
        const services = [SERVICE, UDP_SERVICE];
        for (const s of services) await deleteIgnoringMissing(() => api.delete(kinds.Service, s, { signal }));
        for (const s of services) {
          await until(
            signal,
            `Service ${s.name} gone`,
            async () => {
              try {
                await api.get(kinds.Service, s, { signal });
                return false;
              } catch (err) {
                if (isNotFound(err)) return true;
                throw err;
              }
            },
            100,
          );
        }
        return `Services ${services.map((s) => s.name).join(' and ')} deleted`;
      },
    },
    // Before Cluster API's machines: a Machine moved to Cluster API and back left its paused
    // Cluster API side, which goes with the Machine API Machine that owns it.
    ...(opts.controllers.mapo ? [machineApiTeardown(world, state, cached)] : []),
    {
      name: 'teardown: delete the Machines and OpenStackMachines (servers, ports, volumes go; Nodes go)',
      budgetMs: 60_000,
      always: true,
      async run(signal) {
        const machines = cached<Machine>(capoKinds.Machine);
        const osms = cached<OpenStackMachine>(capoKinds.OpenStackMachine);
        for (const o of machines) await deleteObject(api, capoKinds.Machine, o, signal);
        for (const o of osms) await deleteObject(api, capoKinds.OpenStackMachine, o, signal);
        await until(signal, 'every OpenStackMachine and Node gone', () => {
          return cached(capoKinds.OpenStackMachine).length === 0 && cached(kinds.Node).length === 0;
        });
        return `${osms.length} machines deleted, their Nodes with them`;
      },
    },
    {
      name: 'teardown: delete the OpenStackCluster and Cluster (bastion, API load balancer, network, router, security groups go)',
      budgetMs: 60_000,
      always: true,
      async run(signal) {
        const ns = state.manifest?.namespace;
        for (const o of cached<OpenStackCluster>(capoKinds.OpenStackCluster)) {
          await deleteObject(api, capoKinds.OpenStackCluster, o, signal);
        }
        for (const o of cached<Cluster>(capoKinds.Cluster))
          await deleteObject(api, capoKinds.Cluster, o, signal);
        await until(signal, 'the OpenStackCluster and Cluster gone', () => {
          return cached(capoKinds.OpenStackCluster).length === 0 && cached(capoKinds.Cluster).length === 0;
        });
        if (ns) await deleteIgnoringMissing(() => api.delete(kinds.Namespace, { name: ns }, { signal }));
        return `cluster deleted${ns ? `, namespace ${ns} with it` : ''}`;
      },
    },
    {
      name: 'leak check: every OpenStack resource, as admin, against the census taken before',
      budgetMs: 10_000,
      always: true,
      async run(signal) {
        await deleteIgnoringMissing(() => world.demo.compute.keypairs.delete(KEY_NAME, { signal }));
        state.openstackCalls = openstackCalls(world);
        const before = mustHave(state.census, 'no census was taken before the scenario');
        const after = await takeCensus(world.admin, signal);
        const left = leaks(before, after);
        if (left.length > 0) {
          throw new Error(
            `leaked resources:\n${left.map((l) => `    ${l.kind}: ${l.label} (${l.id})`).join('\n')}`,
          );
        }
        return 'no leaked resources';
      },
    },
  ];
}

function initialized(n: { spec?: { taints?: { key: string }[]; providerID?: string } }): boolean {
  return !(n.spec?.taints ?? []).some((t) => t.key === TAINT_UNINITIALIZED) && Boolean(n.spec?.providerID);
}

/** Running as Cluster API core says it (here capo acting as it): its Node found by providerID. */
function machineRunning(m: Machine): boolean {
  return m.status?.phase === 'Running' && Boolean(m.status.nodeRef?.name);
}

async function ensureNamespace(world: World, name: string, signal: AbortSignal): Promise<void> {
  try {
    await world.api.create(
      kinds.Namespace,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
      { signal },
    );
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
}

function deleteObject<T extends KubernetesObject>(
  api: World['api'],
  type: ResourceType<T>,
  o: T,
  signal: AbortSignal,
): Promise<void> {
  return deleteIgnoringMissing(() =>
    api.delete(type, { namespace: o.metadata?.namespace, name: o.metadata?.name ?? '' }, { signal }),
  );
}
