/**
 * A pool's subport as the pod's VIF (upstream's `neutron_to_osvif_vif_nested_vlan`): the flat `Vif`
 * of src/kuryr/api/vif.ts with the port's MAC, its addresses on the pod subnet, the VLAN id on the
 * Node's trunk, the network's MTU.
 */
import { vifName, type Vif } from '../api/vif.ts';
import type { PodSubnet } from '../drivers.ts';
import type { SubportVif } from './nested-vlan.ts';

export function podVif(port: SubportVif, subnet: PodSubnet, active = false): Vif {
  const ips = port.fixedIps.filter((f) => f.subnet_id === subnet.subnetId).map((f) => f.ip_address);
  return {
    id: port.portId,
    address: port.macAddress,
    vifName: vifName(port.portId),
    vlanId: port.vlanId,
    active,
    network: {
      id: port.networkId,
      ...(subnet.mtu !== undefined ? { mtu: subnet.mtu } : {}),
      subnets: [
        {
          cidr: subnet.cidr,
          ...(subnet.gateway !== undefined ? { gateway: subnet.gateway } : {}),
          ips: ips.length > 0 ? ips : port.fixedIps.map((f) => f.ip_address),
          routes: [],
          dns: [],
        },
      ],
    },
    hasTrafficFiltering: false,
    preserveOnDelete: false,
    plugin: 'noop',
  };
}
