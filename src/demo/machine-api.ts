/**
 * The demo's OpenShift Machine API part: the installer's worker MachineSet of examples/mapo beside
 * the CAPO cluster, run by `shiftstack mapo` (the machine controller on OpenStackServer, the
 * machine-api-operator's MachineSet, nodelink and drain controllers, the migration controller):
 *
 *   MachineSet with 2 replicas → scale to 3, then back to 2 with the Machine marked
 *   `machine.openshift.io/delete-machine` going → one Machine moved to Cluster API and back, with no
 *   OpenStack write → (--once) the MachineSet deleted, its server group with it.
 *
 * The MachineSet is the example's, with what the installer would have named for this cluster: the
 * infrastructure name, the cluster's subnet and worker security group, the demo's image and
 * flavor, the identity Secret of the cluster as `cloudsSecret`. It lives in the cluster's
 * namespace, so the Cluster API Cluster its `machine.openshift.io/cluster-api-cluster` label names
 * is there for the migration.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Node } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { kinds, type KubernetesObject, type ResourceType } from '../kube/index.ts';
import {
  capoKinds,
  type Machine as CapiMachine,
  type OpenStackCluster,
  type OpenStackMachine,
  type OpenStackServer,
} from '../capo/api/index.ts';
import { CLUSTER, operatorKinds } from '../ccm-operator/api/index.ts';
import {
  Annotations,
  Labels,
  MachineConditions,
  mapoKinds,
  type Machine,
  type MachineSet,
} from '../mapo/api/index.ts';
import type { Controllers } from './controllers.ts';
import type { ClusterManifest } from './manifest.ts';
import type { Step } from './scenario.ts';
import { deleteIgnoringMissing, mustHave, until } from './waits.ts';
import type { World } from './world.ts';

export const MAPO_EXAMPLE_PATH = join(import.meta.dirname, '..', '..', 'examples', 'mapo', 'machineset.yaml');
/** The infrastructure name the installer wrote into the example. */
const EXAMPLE_INFRA_ID = 'ostest-7xk2p';
const USER_DATA = { name: 'worker-user-data', key: 'userData' } as const;
/** The worker flavor and image of examples/capo/cluster.yaml. */
const FLAVOR = 'm1.small';
const IMAGE = 'ubuntu-22.04';

export interface MachineApiState {
  manifest?: ClusterManifest;
  machineSet?: { namespace: string; name: string; serverGroup: string };
}

/** examples/mapo's worker MachineSet as the installer would have written it for this cluster. */
export async function demoMachineSet(
  m: ClusterManifest,
  osc: OpenStackCluster,
  replicas: number,
): Promise<MachineSet> {
  const docs = parseAllDocuments(await readFile(MAPO_EXAMPLE_PATH, 'utf8')).map(
    (d) => d.toJS() as KubernetesObject,
  );
  const example = docs.find((d) => d.kind === 'MachineSet');
  if (!example) throw new Error(`${MAPO_EXAMPLE_PATH} holds no MachineSet`);
  // The installer names everything after the infrastructure name: this cluster's name here.
  const ms = JSON.parse(JSON.stringify(example).replaceAll(EXAMPLE_INFRA_ID, m.clusterName)) as MachineSet;
  const subnet = mustHave(osc.status?.network?.subnets?.[0], 'the cluster has no subnet');
  const group = mustHave(osc.status?.workerSecurityGroup, 'the cluster has no worker security group');
  const identity = osc.spec.identityRef;
  ms.metadata = { ...ms.metadata, namespace: m.namespace };
  const msSpec = mustHave(ms.spec, `${MAPO_EXAMPLE_PATH}: the MachineSet has no spec`);
  msSpec.replicas = replicas;
  const spec = msSpec.template!.spec!.providerSpec!.value as Record<string, unknown>;
  Object.assign(spec, {
    cloudsSecret: { name: identity.name, namespace: m.namespace },
    cloudName: identity.cloudName,
    flavor: FLAVOR,
    image: IMAGE,
    networks: [{ filter: {}, subnets: [{ filter: { name: subnet.name } }] }],
    securityGroups: [{ filter: {}, name: group.name }],
  });
  return ms;
}

export function machineApiSteps(
  world: World,
  controllers: Controllers,
  state: MachineApiState,
  cached: <T extends KubernetesObject>(type: ResourceType<T>) => T[],
): Step[] {
  const api = world.api;
  const machines = () => {
    const ms = state.machineSet;
    return cached<Machine>(mapoKinds.Machine).filter(
      (x) =>
        ms && x.metadata?.labels?.[Labels.MachineSet] === ms.name && x.metadata.namespace === ms.namespace,
    );
  };
  const running = (x: Machine) => x.status?.phase === 'Running' && Boolean(x.status.nodeRef?.name);
  const linkedNode = (x: Machine) => {
    const node = cached<V1Node>(kinds.Node).find((n) => n.metadata?.name === x.status?.nodeRef?.name);
    return (
      node?.metadata?.annotations?.[Annotations.Machine] === `${x.metadata?.namespace}/${x.metadata?.name}`
    );
  };
  const scale = async (replicas: number, signal: AbortSignal) => {
    const ms = mustHave(state.machineSet, 'the MachineSet step did not run');
    // What `kubectl scale machineset` sends.
    await api.patch(
      mapoKinds.MachineSet,
      ms,
      'merge',
      { spec: { replicas } },
      { subresource: 'scale', signal },
    );
  };
  const allRunning = (n: number, signal: AbortSignal) =>
    until(signal, `${n} Machines Running with their Nodes linked`, () => {
      const list = machines().filter((x) => !x.metadata?.deletionTimestamp);
      return list.length === n && list.every((x) => running(x) && linkedNode(x)) ? list : undefined;
    });

  return [
    {
      name: "OpenShift's Machine API beside it: the installer's worker MachineSet (examples/mapo) with 2 replicas; shiftstack mapo gives each Machine an OpenStackServer, nodelink links its Node",
      budgetMs: 120_000,
      async run(signal) {
        if (!controllers.mapo) throw new Error('the scenario needs mapo running');
        const m = mustHave(state.manifest, 'the cluster step did not run');
        const osc = mustHave(
          cached<OpenStackCluster>(capoKinds.OpenStackCluster).find(
            (c) => c.metadata?.name === m.clusterName,
          ),
          'the OpenStackCluster is not in the cache',
        );
        // The installer's part: the API VIP the workers' ports must accept, and the user data.
        const vip = osc.status?.apiServerLoadBalancer?.internalIP;
        await api.patch(
          operatorKinds.Infrastructure,
          { name: CLUSTER },
          'merge',
          {
            status: {
              platformStatus: {
                type: 'OpenStack',
                openstack: {
                  apiServerInternalIPs: vip ? [vip] : [],
                  ingressIPs: [],
                  loadBalancer: { type: 'OpenShiftManagedDefault' },
                },
              },
            },
          },
          { subresource: 'status', signal },
        );
        await api
          .create(
            kinds.Secret,
            {
              apiVersion: 'v1',
              kind: 'Secret',
              metadata: { namespace: m.namespace, name: USER_DATA.name },
              stringData: { [USER_DATA.key]: '{"ignition":{"version":"3.2.0"}}' },
            },
            { signal },
          )
          .catch((err: unknown) => {
            if ((err as { code?: number }).code !== 409) throw err;
          });
        const ms = await demoMachineSet(m, osc, 2);
        await api.create(mapoKinds.MachineSet, ms, { signal });
        const spec = ms.spec!.template!.spec!.providerSpec!.value as { serverGroupName?: string };
        state.machineSet = {
          namespace: m.namespace,
          name: ms.metadata!.name!,
          serverGroup: mustHave(spec.serverGroupName, 'the example names no server group'),
        };
        const list = await allRunning(2, signal);
        const pairs = list.map((x) => {
          const server = cached<OpenStackServer>(capoKinds.OpenStackServer).find(
            (s) => s.metadata?.name === x.metadata?.name && s.metadata?.namespace === x.metadata?.namespace,
          );
          return server?.spec.ports?.[0]?.allowedAddressPairs?.map((p) => p.ipAddress).join(',') ?? '';
        });
        return (
          `MachineSet ${ms.metadata!.name}: ${list.map((x) => `${x.metadata?.name} (${x.spec?.providerID ?? '?'})`).join(', ')} Running; ` +
          `server group ${state.machineSet.serverGroup}${vip ? `, API VIP ${vip} an allowed address pair on ${pairs.filter((p) => p.includes(vip)).length} ports` : ''}`
        );
      },
    },
    {
      name: 'scale the MachineSet to 3, then to 2 with machine.openshift.io/delete-machine on one of the first two: it is drained and deleted with its server and ports, its Node goes',
      budgetMs: 120_000,
      async run(signal) {
        const before = machines().map((x) => x.metadata!.name!);
        await scale(3, signal);
        await allRunning(3, signal);
        const chosen = mustHave(before[0], 'no Machine to choose');
        const chosenMachine = mustHave(
          machines().find((x) => x.metadata?.name === chosen),
          'chosen Machine gone',
        );
        const server = chosenMachine.metadata?.annotations?.[Annotations.ResourceID];
        const ns = mustHave(state.machineSet, 'the MachineSet step did not run').namespace;
        await api.patch(
          mapoKinds.Machine,
          { namespace: ns, name: chosen },
          'merge',
          { metadata: { annotations: { [Annotations.DeleteMachine]: 'true' } } },
          { signal },
        );
        await scale(2, signal);
        const left = await until(signal, `Machine ${chosen} deleted with its server, ports and Node`, () => {
          const list = machines();
          const gone =
            !list.some((x) => x.metadata?.name === chosen) &&
            !cached(kinds.Node).some((n) => n.metadata?.name === chosen) &&
            (!server || world.host(server) === undefined) &&
            portsNamed(world, chosen) === 0;
          return gone && list.length === 2 && list.every(running) ? list : undefined;
        });
        return `Machine ${chosen} (server ${server ?? '?'}) gone with its ports and Node; ${left.map((x) => x.metadata?.name).join(', ')} kept`;
      },
    },
    {
      name: 'move one Machine to Cluster API and back (spec.authoritativeAPI): a Cluster API Machine and OpenStackMachine take over its OpenStackServer — same server, same ports, no Nova, Neutron or Cinder write',
      budgetMs: 120_000,
      async run(signal) {
        const ms = mustHave(state.machineSet, 'the MachineSet step did not run');
        const machine = mustHave(machines().find(running), 'no Running Machine');
        const name = machine.metadata!.name!;
        const key = { namespace: ms.namespace, name };
        const serverId = mustHave(machine.metadata?.annotations?.[Annotations.ResourceID], 'no server id');
        const ports = portIdsOf(world, serverId);
        const since = world.sim.cloud.stats.requests(0, { service: 'none' }).last;
        const switchTo = (authoritativeAPI: 'ClusterAPI' | 'MachineAPI') =>
          api.patch(mapoKinds.Machine, key, 'merge', { spec: { authoritativeAPI } }, { signal });

        await switchTo('ClusterAPI');
        await until(
          signal,
          `${name} run by Cluster API: its OpenStackMachine ready on server ${serverId}, its Machine Running`,
          () => {
            const m = cached<Machine>(mapoKinds.Machine).find((x) => x.metadata?.name === name);
            const osm = cached<OpenStackMachine>(capoKinds.OpenStackMachine).find(
              (x) => x.metadata?.name === name,
            );
            const capi = cached<CapiMachine>(capoKinds.Machine).find((x) => x.metadata?.name === name);
            const paused = m?.status?.conditions?.find((c) => c.type === MachineConditions.Paused);
            return (
              m?.status?.authoritativeAPI === 'ClusterAPI' &&
              paused?.status === 'True' &&
              osm?.status?.ready &&
              osm.status.instanceID === serverId &&
              capi?.status?.phase === 'Running'
            );
          },
        );
        const afterForth = writesSince(world, since);
        await switchTo('MachineAPI');
        await until(signal, `${name} run by the Machine API again`, () => {
          const m = cached<Machine>(mapoKinds.Machine).find((x) => x.metadata?.name === name);
          const paused = m?.status?.conditions?.find((c) => c.type === MachineConditions.Paused);
          return (
            m?.status?.authoritativeAPI === 'MachineAPI' && paused?.status === 'False' && m && running(m)
          );
        });
        const writes = writesSince(world, since);
        const samePorts = JSON.stringify(portIdsOf(world, serverId)) === JSON.stringify(ports);
        if (writes.length > 0 || !samePorts || world.host(serverId) === undefined) {
          throw new Error(
            `the switches touched the cloud: ${writes.length} writes (${writes.slice(0, 5).join(', ')}), ports ${samePorts ? 'unchanged' : 'changed'}`,
          );
        }
        return (
          `Machine ${name}: Machine API → Cluster API (${afterForth.length} Nova, Neutron or Cinder writes) → Machine API ` +
          `(${writes.length - afterForth.length}); server ${serverId} and its ${ports.length} port${ports.length === 1 ? '' : 's'} unchanged`
        );
      },
    },
  ];
}

export function machineApiTeardown(
  world: World,
  state: MachineApiState,
  cached: <T extends KubernetesObject>(type: ResourceType<T>) => T[],
): Step {
  return {
    name: 'teardown: delete the MachineSet (its Machines drained and deleted with their servers and ports; the server group, which MAPO never deletes, deleted as openshift-install destroy does)',
    budgetMs: 60_000,
    always: true,
    async run(signal) {
      const ms = state.machineSet;
      if (!ms) return 'no MachineSet was made';
      await deleteIgnoringMissing(() => world.api.delete(mapoKinds.MachineSet, ms, { signal }));
      await until(signal, 'every Machine API Machine and its OpenStackServer gone', () => {
        const left = cached<Machine>(mapoKinds.Machine).filter((x) => x.metadata?.namespace === ms.namespace);
        const servers = cached<OpenStackServer>(capoKinds.OpenStackServer).filter((s) =>
          s.metadata?.ownerReferences?.some(
            (r) => r.kind === 'Machine' && r.apiVersion?.startsWith('machine.openshift.io/'),
          ),
        );
        return left.length === 0 && servers.length === 0;
      });
      const groups = await world.demo.compute.serverGroups.list({}, { signal });
      const group = groups.find((g) => g.name === ms.serverGroup);
      if (group)
        await deleteIgnoringMissing(() => world.demo.compute.serverGroups.delete(group.id, { signal }));
      return `MachineSet ${ms.name} deleted with its Machines${group ? `; server group ${ms.serverGroup} deleted` : ''}`;
    },
  };
}

/**
 * Writes after `since` to the services a server lives on (Nova, Neutron, Cinder), as `METHOD path`
 * lines. Octavia is left out: the ccm keeps updating load-balancer members as the Nodes of the
 * previous step come and go, which is not the handover's doing.
 */
function writesSince(world: World, since: number): string[] {
  return world.sim.cloud.stats
    .requests(since, { writes: true })
    .requests.filter((r) => SERVER_SERVICES.has(r.service))
    .map((r) => `${r.service} ${r.operation}`);
}
const SERVER_SERVICES = new Set(['nova', 'neutron', 'cinder']);

function portIdsOf(world: World, serverId: string): string[] {
  return world.sim.cloud.network
    .portsByDevice(serverId)
    .map((p) => p.id)
    .sort();
}

/** Ports named after a machine (`<machine>-<index|suffix>`), read from the emulator. */
function portsNamed(world: World, machine: string): number {
  const snap = world.sim.cloud.snapshot() as { neutron?: { ports?: { name: string }[] } };
  return (snap.neutron?.ports ?? []).filter((p) => p.name.startsWith(`${machine}-`)).length;
}
