/**
 * What a Machine shows of its OpenStackServer, pure (MAPO's actuator `reconcile` steps 6–10 and
 * the machine controller's phases): providerID `openstack:///<id>`, the labels region, zone and
 * instance-type, the annotations `openstack-resourceId` and `machine.openshift.io/instance-state`,
 * the addresses (the server's, then the Machine's name as Hostname and InternalDNS, which CSR
 * approval matches against the Node name), and the OpenstackProviderStatus MAPO never wrote.
 */
import type { OpenStackServer } from '../../capo/api/index.ts';
import {
  PROVIDER_API_VERSION,
  PROVIDER_STATUS_KIND,
  type Machine,
  type NodeAddress,
  type OpenstackProviderStatus,
} from '../api/index.ts';

/** MAPO's providerID: no region, as the in-tree provider and the CCM write it without one. */
export function providerIDOf(instanceID: string): string {
  return `openstack:///${instanceID}`;
}

export function machineAddresses(machine: Machine, server: OpenStackServer): NodeAddress[] {
  const name = machine.metadata?.name ?? '';
  const out: NodeAddress[] = (server.status?.addresses ?? [])
    .filter((a) => a.type !== 'Hostname' && a.type !== 'InternalDNS')
    .map((a) => ({ type: a.type ?? '', address: a.address ?? '' }));
  out.push({ type: 'Hostname', address: name }, { type: 'InternalDNS', address: name });
  return out;
}

export interface ServerFacts {
  /** The flavor name the server was made with. */
  flavor: string;
  /** The region of the credentials' clouds.yaml. */
  region: string | undefined;
  /** The server's zone, as Nova placed it. */
  zone: string | undefined;
}

export function providerStatusOf(server: OpenStackServer): OpenstackProviderStatus {
  const st = server.status;
  const resolved = st?.resolved;
  const ids = st?.resources?.ports ?? [];
  return {
    apiVersion: PROVIDER_API_VERSION,
    kind: PROVIDER_STATUS_KIND,
    ...(st?.instanceID ? { instanceId: st.instanceID } : {}),
    ...(st?.instanceState ? { instanceState: st.instanceState } : {}),
    serverRef: { name: server.metadata?.name ?? '' },
    ...(resolved?.imageID || resolved?.flavorID
      ? {
          resolved: {
            ...(resolved.imageID ? { imageID: resolved.imageID } : {}),
            ...(resolved.flavorID ? { flavorID: resolved.flavorID } : {}),
            ...(resolved.serverGroupID ? { serverGroupID: resolved.serverGroupID } : {}),
          },
        }
      : {}),
    ...(ids.length > 0 || resolved?.ports?.length
      ? {
          ports: (resolved?.ports ?? []).map((p, i) => ({
            name: p.name ?? '',
            networkID: p.networkID ?? '',
            ...(ids[i]?.id ? { id: ids[i].id } : {}),
          })),
        }
      : {}),
  };
}
