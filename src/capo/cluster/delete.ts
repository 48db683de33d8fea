/**
 * Tearing down what `managedSubnets` made (CAPO's reconcileDelete step 4: router, cluster ports,
 * network), found by the deterministic name, so it works after a restart and whatever status says.
 * Runs only for a cluster whose accepted spec has managedSubnets: a bring-your-own network, subnet
 * or router is never deleted (a user's router only loses the interface on our subnet).
 *
 * By the time this runs the bastion, the load balancer and the machines are gone. A port left on
 * the network is deleted only when it carries our mark (see foreign.ts: CAPO's description, a
 * bastion port's name); Neutron's own go with the network, our router's with the router. Any other
 * port (a server's, Octavia's, a pod's, a user's, another router's interface) is foreign: it is
 * reported and the network waits for it (Neutron refuses to delete a network with ports anyway).
 */
import { isConflict, isNotFound } from '../../openstack/core/errors.ts';
import type { Router } from '../../openstack/network/v2/routers.ts';
import { DependencyError } from '../../openstack/services/server/index.ts';
import type { OpenStackClusterSpec } from '../api/index.ts';
import type { ClusterApi } from './api.ts';
import { foreignPort, portOwnership, type ForeignPort } from './foreign.ts';
import { networkName } from './names.ts';
import { resolveRouter } from './params.ts';

export interface TeardownOutcome {
  /** Everything of ours is gone. */
  done: boolean;
  /** What is still there, for the log and the requeue. */
  waitingFor?: string | undefined;
  deleted: string[];
  /** Ports on the network this cluster did not make: left, and the network waits for them. */
  foreign: ForeignPort[];
  /** The network they are on: `<name> (<id>)`. */
  network?: string | undefined;
}

const ignoreNotFound = (err: unknown) => {
  if (!isNotFound(err)) throw err;
};

export async function deleteManagedNetwork(
  api: ClusterApi,
  spec: OpenStackClusterSpec,
  names: { resourceName: string; clusterName: string },
  signal: AbortSignal,
): Promise<TeardownOutcome> {
  const { resourceName, clusterName } = names;
  const out: TeardownOutcome = { done: false, deleted: [], foreign: [] };
  if (!(spec.managedSubnets ?? []).length) return { ...out, done: true };
  const o = { signal };
  const name = networkName(resourceName);
  const networks = await api.network.networks.list({ name }, o).all();
  const networkIDs = new Set(networks.map((n) => n.id));

  let userRouter: Router | undefined;
  if (spec.router)
    userRouter = await resolveRouter(api, spec.router, o).catch((err: unknown) => {
      // The user's router is gone: nothing of ours can hang on it.
      if (DependencyError.is(err) && err.problem === 'NotFound') return undefined;
      throw err;
    });
  const routers = userRouter ? [userRouter] : await api.network.routers.list({ name }, o).all();
  const routerIDs = new Set(routers.map((r) => r.id));
  for (const router of routers) {
    const interfaces = (await api.network.ports.list({ device_id: router.id }, o).all()).filter((p) =>
      p.device_owner.startsWith('network:router_interface'),
    );
    for (const port of interfaces) {
      // On the user's router, only our network's interface is ours to remove.
      if (userRouter && !networkIDs.has(port.network_id)) continue;
      await api.network.routers.removeInterface(router.id, { port_id: port.id }, o).catch(ignoreNotFound);
      out.deleted.push(`router interface ${port.id}`);
    }
    if (!userRouter) {
      await api.network.routers.delete(router.id, o).catch(ignoreNotFound);
      out.deleted.push(`router ${router.name}`);
    }
  }

  for (const network of networks) {
    const ports = await api.network.ports.list({ network_id: network.id }, o).all();
    const marks = { resourceName, clusterName, routerIDs };
    const foreign = ports.filter((p) => portOwnership(p, marks) === 'foreign');
    for (const port of ports.filter((p) => portOwnership(p, marks) === 'ours')) {
      await api.network.ports.delete(port.id, o).catch(ignoreNotFound);
      out.deleted.push(`port ${port.name || port.id}`);
    }
    if (foreign.length > 0) {
      return {
        ...out,
        foreign: foreign.map(foreignPort),
        network: `${network.name} (${network.id})`,
        waitingFor: `network ${network.name} has ports this cluster did not make`,
      };
    }
    try {
      await api.network.networks.delete(network.id, o);
      out.deleted.push(`network ${network.name}`);
    } catch (err) {
      if (isConflict(err)) return { ...out, waitingFor: `network ${network.name} still has ports` };
      ignoreNotFound(err);
    }
  }
  return { ...out, done: true };
}
