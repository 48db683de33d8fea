/**
 * A namespace's Neutron network, one step at a time (upstream's KuryrNetworkHandler.on_present with
 * the namespace subnet driver): the network (MTU `[neutron_defaults] network_device_mtu`), its subnet
 * from `[namespace_subnet] pod_subnet_pool`, the interface on `[namespace_subnet] pod_router`.
 *
 * Each step returns what it made, for the caller to record in the KuryrNetwork's status before the
 * next step runs; a step whose object is not recorded looks for it first (the network by its
 * uid-bearing name, the subnet on the network, the interface among the router's ports), so a crash
 * between a create and its record adopts the object instead of making a second one. Tags are
 * written right after a create and again on adoption when they are missing, as upstream re-tags.
 */
import type { NetworkV2 } from '../../openstack/network/v2/index.ts';
import { isBadRequest } from '../../openstack/core/errors.ts';
import { namespaceResourceDescription, namespaceResourceName, type NamespaceRef } from './names.ts';

/** What a KuryrNetwork's status records of the Neutron side (upstream's field names). */
export interface NamespaceNetworkStatus {
  netId?: string | undefined;
  subnetId?: string | undefined;
  subnetCIDR?: string | undefined;
  routerId?: string | undefined;
  populated?: boolean | undefined;
}

export interface NamespaceNetworkSettings {
  /** The KuryrNetwork's spec.projectId: the project the network and subnet are made in. */
  projectId: string;
  /** `[namespace_subnet] pod_subnet_pool`. */
  subnetPoolId: string;
  /** `[namespace_subnet] pod_router`. */
  routerId: string;
  /** `[neutron_defaults] network_device_mtu`; undefined lets Neutron choose. */
  mtu?: number | undefined;
  /** ownerTags(options): what marks an object as this cluster's kuryr's. */
  tags: readonly string[];
}

/** One step's outcome: a status patch to record (with the Event upstream emits), or nothing left to do. */
export type ProvisionStep =
  { kind: 'recorded'; status: NamespaceNetworkStatus; reason: string; message: string } | { kind: 'ready' };

/** A step that failed, with upstream's Event reason, naming the object it was about. */
export class NamespaceNetworkError extends Error {
  override readonly name = 'NamespaceNetworkError';
  readonly reason: string;
  override readonly cause: unknown;
  constructor(reason: string, message: string, cause: unknown) {
    super(`${message}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.reason = reason;
    this.cause = cause;
  }
}

const missingTags = (have: readonly string[] | undefined, want: readonly string[]) =>
  want.filter((t) => !(have ?? []).includes(t));

async function ensureTags(
  network: NetworkV2,
  resource: 'networks' | 'subnets',
  obj: { id: string; tags?: readonly string[] | undefined },
  tags: readonly string[],
  signal: AbortSignal,
): Promise<void> {
  const missing = missingTags(obj.tags, tags);
  if (missing.length === 0) return;
  await network.tags.replace(resource, obj.id, [...(obj.tags ?? []), ...missing], { signal });
}

async function wrap<T>(reason: string, message: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof NamespaceNetworkError) throw err;
    throw new NamespaceNetworkError(reason, message, err);
  }
}

export async function provisionStep(
  network: NetworkV2,
  ns: NamespaceRef,
  status: NamespaceNetworkStatus,
  settings: NamespaceNetworkSettings,
  signal: AbortSignal,
): Promise<ProvisionStep> {
  const o = { signal };
  const netId = status.netId;
  if (!netId) {
    return wrap(
      'CreateNetworkFailed',
      `Error during creating Neutron network for namespace ${ns.name}`,
      async () => {
        const name = namespaceResourceName(ns);
        const found = await network.networks.list({ name, project_id: settings.projectId }, o).all();
        let net = found[0];
        if (!net) {
          net = await network.networks.create(
            {
              name,
              description: namespaceResourceDescription(ns),
              project_id: settings.projectId,
              ...(settings.mtu ? { mtu: settings.mtu } : {}),
            },
            o,
          );
        }
        await ensureTags(network, 'networks', net, settings.tags, signal);
        return {
          kind: 'recorded',
          status: { netId: net.id },
          reason: 'CreateNetworkSucceed',
          message: `Neutron network ${net.id} for namespace`,
        };
      },
    );
  }
  if (!status.subnetId) {
    return wrap(
      'CreateSubnetFailed',
      `Error during creating Neutron subnet for network ${netId}`,
      async () => {
        // One subnet per namespace network: whatever is on our network is the one an earlier run made.
        let subnet = (await network.subnets.list({ network_id: netId }, o).all())[0];
        if (!subnet) {
          const pool = await network.subnetPools.get(settings.subnetPoolId, o);
          subnet = await network.subnets.create(
            {
              network_id: netId,
              name: namespaceResourceName(ns),
              description: namespaceResourceDescription(ns),
              ip_version: pool.ip_version,
              subnetpool_id: pool.id,
              enable_dhcp: false,
              project_id: settings.projectId,
            },
            o,
          );
        }
        await ensureTags(network, 'subnets', subnet, settings.tags, signal);
        return {
          kind: 'recorded',
          status: { subnetId: subnet.id, subnetCIDR: subnet.cidr },
          reason: 'CreateSubnetSucceed',
          message: `Neutron subnet ${subnet.id} for network ${netId}`,
        };
      },
    );
  }
  if (!status.routerId) {
    const subnetId = status.subnetId;
    const routerId = settings.routerId;
    return wrap(
      'AddingSubnetToRouterFailed',
      `Error adding Neutron subnet ${subnetId} to router`,
      async () => {
        const attached = await network.ports
          .list({ device_id: routerId, network_id: netId, fixed_ips: [{ subnet_id: subnetId }] }, o)
          .all();
        if (attached.length === 0) {
          try {
            await network.routers.addInterface(routerId, { subnet_id: subnetId }, o);
          } catch (err) {
            // Attached meanwhile by an earlier run whose answer we never read: Neutron's 400 says so.
            if (!isBadRequest(err) || !/already has a port/.test(err.serviceMessage)) throw err;
          }
        }
        return {
          kind: 'recorded',
          status: { routerId, populated: false },
          reason: 'AddingSubnetToRouterSucceed',
          message: `Neutron subnet ${subnetId} added to router ${routerId}`,
        };
      },
    );
  }
  return { kind: 'ready' };
}
