/**
 * What one emulated service asks of another. Production OpenStack services talk over RPC and REST;
 * here they call these interfaces on the shared cloud object, so cross-service invariants
 * (Nova's addresses come from Neutron ports, Octavia's VIP is a Neutron port) hold without HTTP.
 */
import type { AuthContext } from './types.ts';

export interface ProjectView {
  id: string;
  name: string;
  domain_id: string;
}

export interface IdentityApi {
  /** Resolves a token; throws SimError 401 when unknown or expired. */
  validate(token: string): AuthContext;
  getProject(id: string): ProjectView | undefined;
  projectByName(name: string, domainId: string): ProjectView | undefined;
  expireAllTokens(): void;
}

export interface FixedIp {
  subnet_id: string;
  ip_address: string;
}

/** The Neutron port fields other services read; the record itself carries every Neutron field. */
export interface PortView {
  id: string;
  name: string;
  network_id: string;
  project_id: string;
  mac_address: string;
  fixed_ips: FixedIp[];
  device_id: string;
  device_owner: string;
  status: string;
  'binding:host_id': string;
  security_groups: string[];
}

export interface NetworkView {
  id: string;
  name: string;
  project_id: string;
  'router:external': boolean;
  subnets: string[];
  mtu: number;
}

export interface SubnetView {
  id: string;
  name: string;
  network_id: string;
  project_id: string;
  ip_version: 4 | 6;
  cidr: string;
}

export interface PortCreateSpec {
  network_id: string;
  project_id: string;
  name?: string;
  fixed_ips?: Partial<FixedIp>[];
  security_groups?: string[];
  device_id?: string;
  device_owner?: string;
  'binding:host_id'?: string;
  admin_state_up?: boolean;
}

export interface NetworkApi {
  getPort(id: string): PortView | undefined;
  getNetwork(id: string): NetworkView | undefined;
  getSubnet(id: string): SubnetView | undefined;
  /** Creates a port with Neutron's validation and IPAM; throws SimError in Neutron's terms. */
  createPort(spec: PortCreateSpec): PortView;
  /** Sets device ownership and binding (Nova boot, interface attach, Octavia VIP). */
  updatePort(
    id: string,
    patch: Partial<Pick<PortView, 'device_id' | 'device_owner' | 'binding:host_id' | 'status'>>,
  ): PortView;
  deletePort(id: string): void;
  portsByDevice(deviceId: string): PortView[];
  /** Floating IPs associated to a port, for Nova's `addresses` (OS-EXT-IPS:type floating). */
  floatingIpsForPort(portId: string): { floating_ip_address: string; fixed_ip_address: string }[];
}

export interface ServerView {
  id: string;
  name: string;
  project_id: string;
  status: string;
}

export interface ComputeApi {
  getServer(id: string): ServerView | undefined;
}

export interface ImageView {
  id: string;
  name: string;
  status: string;
  owner: string;
  visibility: string;
  min_disk: number;
  min_ram: number;
  size: number | null;
}

export interface ImageApi {
  getImage(id: string): ImageView | undefined;
}

export interface VolumeView {
  id: string;
  name: string;
  project_id: string;
  status: string;
  size: number;
}

export interface VolumeApi {
  getVolume(id: string): VolumeView | undefined;
  /** Boot-from-volume: a volume created by Nova for a block_device_mapping_v2 with source image/blank. */
  createVolume(spec: {
    project_id: string;
    size: number;
    name?: string;
    imageRef?: string;
    volume_type?: string;
  }): VolumeView;
  attach(volumeId: string, serverId: string, device: string): void;
  detach(volumeId: string, serverId: string): void;
  deleteVolume(id: string): void;
}
