/**
 * A Node's trunk (upstream's `_get_parent_port` + `_get_trunk_id`): the Node's server from its
 * `spec.providerID`, the server's port that is a trunk parent, the trunk. With
 * `[pod_vif_nested] worker_nodes_subnets` set, a Node without providerID is found by its InternalIP
 * on those subnets, as upstream finds the parent port by the host's address. One Neutron list per
 * Node, then cached until `forget` (a trunk gone, a Node deleted or changed).
 */
import type { V1Node } from '@kubernetes/client-node';
import { isNotFound } from '../../openstack/core/errors.ts';
import type { OpenStackClient } from '../../openstack/client.ts';
import type { Port } from '../../openstack/network/v2/ports.ts';
import { parseProviderId, ProviderIdError } from '../../openstack/services/provider-id.ts';

/** What the driver needs of the cloud (a killable proxy in tests). */
export type VifApi = Pick<OpenStackClient, 'network' | 'compute'>;

export interface NodeTrunk {
  nodeName: string;
  trunkId: string;
  parentPortId: string;
  /** The parent port's first address: the pool key's host, as upstream's hostIP. */
  hostIp: string;
  /** Empty when the Node was found by address. */
  serverId: string;
}

export type NodeTrunkProblem =
  'NoProviderID' | 'InvalidProviderID' | 'ServerNotFound' | 'NoTrunk' | 'NodeGone';

/** A Node whose pods cannot be wired, with what to do about it. */
export class NodeTrunkError extends Error {
  override readonly name = 'NodeTrunkError';
  readonly node: string;
  readonly problem: NodeTrunkProblem;
  /** What the user fixes, said in the Event. */
  readonly fix: string;

  constructor(node: string, problem: NodeTrunkProblem, message: string, fix: string) {
    super(`node ${node}: ${message}; ${fix}`);
    this.node = node;
    this.problem = problem;
    this.fix = fix;
  }
}

export class NodeTrunks {
  private readonly api: VifApi;
  private readonly workerSubnets: readonly string[];
  private readonly cache = new Map<string, { key: string; trunk: NodeTrunk }>();

  constructor(api: VifApi, workerNodesSubnets: readonly string[] = []) {
    this.api = api;
    this.workerSubnets = workerNodesSubnets;
  }

  /** The Node's trunk; throws NodeTrunkError for a Node Kuryr cannot wire pods on. */
  async resolve(node: V1Node, signal?: AbortSignal): Promise<NodeTrunk> {
    const name = node.metadata?.name ?? '';
    const providerID = node.spec?.providerID ?? '';
    const ip = node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '';
    const key = `${providerID} ${ip}`;
    const hit = this.cache.get(name);
    if (hit?.key === key) return hit.trunk;
    const trunk = providerID
      ? await this.byServer(name, providerID, signal)
      : await this.byAddress(name, ip, signal);
    this.cache.set(name, { key, trunk });
    return trunk;
  }

  /** Drops what is known of a Node: its trunk went away, or the Node did. */
  forget(nodeName: string): void {
    this.cache.delete(nodeName);
  }

  /** The Nodes resolved so far. */
  known(): string[] {
    return [...this.cache.keys()];
  }

  /** The trunk of a Node resolved before. */
  trunkOf(nodeName: string): string | undefined {
    return this.cache.get(nodeName)?.trunk.trunkId;
  }

  /** The Node a trunk belongs to, among those resolved. */
  nodeOfTrunk(trunkId: string): string | undefined {
    for (const [name, { trunk }] of this.cache) if (trunk.trunkId === trunkId) return name;
    return undefined;
  }

  private async byServer(name: string, providerID: string, signal?: AbortSignal): Promise<NodeTrunk> {
    let serverId: string;
    try {
      serverId = parseProviderId(providerID).serverId;
    } catch (err) {
      if (!(err instanceof ProviderIdError)) throw err;
      throw new NodeTrunkError(
        name,
        'InvalidProviderID',
        err.message,
        'set an openstack:///<server id> providerID (the cloud controller manager does)',
      );
    }
    const ports = await this.api.network.ports.list({ device_id: serverId }, { signal }).all();
    if (ports.length === 0) {
      try {
        await this.api.compute.servers.get(serverId, { signal });
      } catch (err) {
        if (!isNotFound(err)) throw err;
        throw new NodeTrunkError(
          name,
          'ServerNotFound',
          `server ${serverId} of providerID ${providerID} does not exist`,
          'the Node is stale: delete it, or fix its providerID',
        );
      }
    }
    return this.pickTrunk(name, serverId, ports, signal);
  }

  private async byAddress(name: string, ip: string, signal?: AbortSignal): Promise<NodeTrunk> {
    if (this.workerSubnets.length === 0 || !ip) {
      throw new NodeTrunkError(
        name,
        'NoProviderID',
        'has no spec.providerID',
        'run a cloud controller manager that sets it, or set [pod_vif_nested] worker_nodes_subnets so the Node is found by its InternalIP',
      );
    }
    const ports: Port[] = [];
    for (const subnet of this.workerSubnets) {
      const query = { fixed_ips: [{ ip_address: ip, subnet_id: subnet }] };
      ports.push(...(await this.api.network.ports.list(query, { signal }).all()));
    }
    return this.pickTrunk(name, '', ports, signal);
  }

  private async pickTrunk(
    name: string,
    serverId: string,
    ports: readonly Port[],
    signal?: AbortSignal,
  ): Promise<NodeTrunk> {
    const onWorkerSubnets = (p: Port) =>
      this.workerSubnets.length === 0 || p.fixed_ips.some((f) => this.workerSubnets.includes(f.subnet_id));
    let parent = ports.find((p) => p.trunk_details && onWorkerSubnets(p));
    let trunkId = parent?.trunk_details?.trunk_id;
    if (!parent && ports.length > 0) {
      // A cloud without the trunk-details extension: ask the trunks by parent port.
      const trunks = await this.api.network.trunks
        .list({ port_id: ports.map((p) => p.id) }, { signal })
        .all();
      const trunk = trunks.find((t) => ports.some((p) => p.id === t.port_id && onWorkerSubnets(p)));
      parent = trunk && ports.find((p) => p.id === trunk.port_id);
      trunkId = trunk?.id;
    }
    if (!parent || !trunkId) {
      const where = serverId ? `server ${serverId}` : 'its address';
      throw new NodeTrunkError(
        name,
        'NoTrunk',
        `no port of ${where} is a trunk parent${this.workerSubnets.length ? ` on [pod_vif_nested] worker_nodes_subnets ${this.workerSubnets.join(',')}` : ''}`,
        'give the worker a trunk port (CAPO: ports[].trunk: true, MAPO: trunk: true) and recreate it',
      );
    }
    return {
      nodeName: name,
      trunkId,
      parentPortId: parent.id,
      hostIp: parent.fixed_ips[0]?.ip_address ?? '',
      serverId,
    };
  }
}
