/**
 * A server's network interfaces (`os-interface`): list, attach a port or a network, detach.
 * https://docs.openstack.org/api-ref/compute/#port-interfaces-servers-os-interface
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { computeMicroversion } from './microversion.ts';

export interface InterfaceAttachment {
  port_id: string;
  net_id: string;
  mac_addr: string;
  port_state: string;
  fixed_ips: { subnet_id: string; ip_address: string }[];
  /** @microversion 2.70 */
  tag?: string | null;
}

/** A pre-created port, or a network (Nova creates the port and deletes it on detach). */
export type InterfaceAttachOpts =
  { port_id: string; tag?: string } | { net_id: string; fixed_ips?: { ip_address: string }[]; tag?: string };

const base = (serverId: string) => `servers/${encodeURIComponent(serverId)}/os-interface`;

/** `GET …/os-interface` (OCCM's `server_os_interface_list`). */
export async function listInterfaces(
  sc: ServiceClient,
  serverId: string,
  options: CallOptions = {},
): Promise<InterfaceAttachment[]> {
  await computeMicroversion(sc, options.signal);
  const res = await sc.request<{ interfaceAttachments: InterfaceAttachment[] }>({
    method: 'GET',
    path: base(serverId),
    label: 'server_os_interface_list',
    signal: options.signal,
  });
  return res.body.interfaceAttachments;
}

/** `POST …/os-interface` → the attachment. A port in use elsewhere is a 409. */
export async function attachInterface(
  sc: ServiceClient,
  serverId: string,
  attach: InterfaceAttachOpts,
  options: CallOptions = {},
): Promise<InterfaceAttachment> {
  await computeMicroversion(sc, options.signal);
  const res = await sc.request<{ interfaceAttachment: InterfaceAttachment }>({
    method: 'POST',
    path: base(serverId),
    body: { interfaceAttachment: attach },
    label: 'server_os_interface_create',
    signal: options.signal,
  });
  return res.body.interfaceAttachment;
}

/** `DELETE …/os-interface/{port_id}` → 202; the detach finishes shortly after (the port's device_id empties). */
export async function detachInterface(
  sc: ServiceClient,
  serverId: string,
  portId: string,
  options: CallOptions = {},
): Promise<void> {
  await computeMicroversion(sc, options.signal);
  await sc.request({
    method: 'DELETE',
    path: `${base(serverId)}/${encodeURIComponent(portId)}`,
    label: 'server_os_interface_delete',
    signal: options.signal,
    expect: [202],
    responseType: 'bytes',
  });
}
