/**
 * The cloud side of `shiftstack kuryr gc`: our tagged objects read from Neutron and Octavia, and
 * the deletes of orphans in an order Neutron accepts (ports off their trunk, then ports; subnets;
 * networks after their router interfaces; load balancers with their children). A 404 is success:
 * someone else removed it first.
 */
import { EndpointNotFoundError, ignoreNotFound, isNotFound } from '../../openstack/core/errors.ts';
import type { OpenStackClient } from '../../openstack/client.ts';
import type { CloudInventory, Orphan } from './orphans.ts';

export async function readCloud(
  os: OpenStackClient,
  tags: readonly string[],
  signal: AbortSignal,
): Promise<CloudInventory> {
  const o = { signal };
  const [ports, networks, subnets, trunks, loadBalancers] = await Promise.all([
    os.network.ports.list({ tags }, o).all(),
    os.network.networks.list({ tags }, o).all(),
    os.network.subnets.list({ tags }, o).all(),
    os.network.trunks.list({}, o).all(),
    // A cloud without Octavia has no load balancers of ours.
    os.loadBalancer.loadBalancers
      .list({ tags }, o)
      .all()
      .catch((err: unknown) => {
        if (err instanceof EndpointNotFoundError) return [];
        throw err;
      }),
  ]);
  const trunkSubports = new Set<string>();
  for (const t of trunks) for (const sp of t.sub_ports) trunkSubports.add(sp.port_id);
  return { ports, networks, subnets, loadBalancers, trunkSubports };
}

const ORDER: Record<Orphan['kind'], number> = { loadbalancer: 0, port: 1, subnet: 2, network: 3 };

export interface DeleteOutcome {
  orphan: Orphan;
  /** undefined when deleted (or already gone). */
  error?: string | undefined;
}

/** Deletes orphans, each independently: one failure is reported and the others still go. */
export async function deleteOrphans(
  os: OpenStackClient,
  orphans: readonly Orphan[],
  signal: AbortSignal,
): Promise<DeleteOutcome[]> {
  const out: DeleteOutcome[] = [];
  for (const orphan of [...orphans].sort((a, b) => ORDER[a.kind] - ORDER[b.kind])) {
    try {
      await deleteOne(os, orphan, signal);
      out.push({ orphan });
    } catch (err) {
      if (isNotFound(err)) out.push({ orphan });
      else out.push({ orphan, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return out;
}

async function deleteOne(os: OpenStackClient, orphan: Orphan, signal: AbortSignal): Promise<void> {
  const o = { signal };
  const net = os.network;
  switch (orphan.kind) {
    case 'loadbalancer':
      await os.loadBalancer.loadBalancers.delete(orphan.id, { ...o, cascade: true });
      return;
    case 'port':
      await net.ports.delete(orphan.id, o);
      return;
    case 'subnet':
    case 'network': {
      const filter = orphan.kind === 'subnet' ? { fixed_ips: [{ subnet_id: orphan.id }] } : {};
      const networkId =
        orphan.kind === 'network' ? orphan.id : (await net.subnets.get(orphan.id, o)).network_id;
      const routerPorts = await net.ports
        .list({ network_id: networkId, device_owner: 'network:router_interface', ...filter }, o)
        .all();
      for (const p of routerPorts) {
        await net.routers.removeInterface(p.device_id, { port_id: p.id }, o).catch(ignoreNotFound);
      }
      if (orphan.kind === 'subnet') await net.subnets.delete(orphan.id, o);
      else await net.networks.delete(orphan.id, o);
      return;
    }
  }
}
