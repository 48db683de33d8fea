/**
 * The NetworkApi other emulated services call (Nova for server ports, Octavia for VIPs). It goes
 * through the same code as the HTTP API, so IPAM, MAC and trunk rules hold for everyone.
 */
import type { NetworkApi, NetworkView, PortCreateSpec, PortView, SubnetView } from '../core/contracts.ts';
import { notFound } from './errors.ts';
import { createPort, deletePort, updatePort, type PortInput } from './ports.ts';
import { checkFixedIps } from './schema.ts';
import { ensureDefaultGroup } from './security-groups.ts';
import type { Actor, NeutronState } from './state.ts';

/** Services act with their own admin credentials on behalf of a project. */
const SERVICE: Actor = { projectId: '', isAdmin: true };

export class NeutronNetworkApi implements NetworkApi {
  private readonly state: NeutronState;
  private readonly ready: () => void;

  constructor(state: NeutronState, ready: () => void) {
    this.state = state;
    this.ready = ready;
  }

  getPort(id: string): PortView | undefined {
    this.ready();
    return this.state.ports.get(id);
  }

  getNetwork(id: string): NetworkView | undefined {
    this.ready();
    return this.state.networks.get(id);
  }

  getSubnet(id: string): SubnetView | undefined {
    this.ready();
    return this.state.subnets.get(id);
  }

  createPort(spec: PortCreateSpec): PortView {
    this.ready();
    const body: PortInput = { network_id: spec.network_id, project_id: spec.project_id };
    if (spec.name !== undefined) body.name = spec.name;
    if (spec.fixed_ips !== undefined) body.fixed_ips = checkFixedIps(spec.fixed_ips, 'fixed_ips');
    if (spec.security_groups !== undefined)
      body.security_groups = this.groupIds(spec.project_id, spec.security_groups);
    if (spec.device_id !== undefined) body.device_id = spec.device_id;
    if (spec.device_owner !== undefined) body.device_owner = spec.device_owner;
    if (spec['binding:host_id'] !== undefined) body['binding:host_id'] = spec['binding:host_id'];
    if (spec.admin_state_up !== undefined) body.admin_state_up = spec.admin_state_up;
    return createPort(this.state, SERVICE, body, true);
  }

  updatePort(
    id: string,
    patch: Partial<Pick<PortView, 'device_id' | 'device_owner' | 'binding:host_id' | 'status'>>,
  ): PortView {
    this.ready();
    return updatePort(this.state, SERVICE, id, { ...patch }, { trusted: true });
  }

  deletePort(id: string): void {
    this.ready();
    deletePort(this.state, SERVICE, id);
  }

  portsByDevice(deviceId: string): PortView[] {
    this.ready();
    return this.state
      .portsOf(deviceId)
      .sort((a, b) =>
        a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1,
      );
  }

  floatingIpsForPort(portId: string): { floating_ip_address: string; fixed_ip_address: string }[] {
    this.ready();
    return [...this.state.fipsByPort.get(portId)].flatMap((id) => {
      const fip = this.state.floatingIps.get(id);
      return fip?.fixed_ip_address
        ? [{ floating_ip_address: fip.floating_ip_address, fixed_ip_address: fip.fixed_ip_address }]
        : [];
    });
  }

  /** Nova passes security groups by name or id, as its API accepts; names resolve in the project. */
  private groupIds(projectId: string, refs: string[]): string[] {
    return refs.map((ref) => {
      const byId = this.state.securityGroups.get(ref);
      if (byId) return byId.id;
      if (ref === 'default') {
        const id = ensureDefaultGroup(this.state, projectId);
        if (id) return id;
      }
      for (const g of this.state.securityGroups.values()) {
        if (g.project_id === projectId && g.name === ref) return g.id;
      }
      throw notFound.securityGroup(ref);
    });
  }
}
