/**
 * Neutron trunks: a parent port carrying VLAN-tagged subports (Kuryr's nested pods, CAPO's trunk
 * ports). https://docs.openstack.org/api-ref/network/v2/#trunk-networking
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { neutronResource, type ListParams, type TagFilters } from './resource.ts';

export interface SubPort {
  port_id: string;
  segmentation_type: 'vlan' | 'inherit';
  segmentation_id: number;
}

export interface Trunk {
  id: string;
  name: string;
  description: string;
  project_id: string;
  /** The parent port. */
  port_id: string;
  admin_state_up: boolean;
  /** `DOWN` until the parent port is bound and wired, then `ACTIVE`, `BUILD`, `DEGRADED` or `ERROR`. */
  status: string;
  sub_ports: SubPort[];
  tags: string[];
  created_at?: string;
  updated_at?: string;
  revision_number: number;
}

/** Fields not declared here are sent as given (Neutron rejects unknown ones with a 400). */
export interface TrunkCreateOpts {
  port_id: string;
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  sub_ports?: SubPort[];
  project_id?: string;
  [field: string]: unknown;
}

export interface TrunkUpdateOpts {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  [field: string]: unknown;
}

export interface TrunkListQuery extends ListParams, TagFilters {
  id?: string | readonly string[];
  name?: string | readonly string[];
  port_id?: string | readonly string[];
  project_id?: string;
  status?: string;
  admin_state_up?: boolean;
  description?: string;
}

export const trunks = neutronResource<Trunk, TrunkCreateOpts, TrunkUpdateOpts, TrunkListQuery>({
  path: 'trunks',
  key: 'trunk',
  collection: 'trunks',
  label: 'trunk',
});

const action = (id: string, name: string) => `trunks/${encodeURIComponent(id)}/${name}`;

/**
 * `PUT /v2.0/trunks/{id}/add_subports` → the trunk with its new subports. A port already in use (or
 * a segmentation id already taken) is a 409 and nothing is added.
 */
export async function addSubports(
  sc: ServiceClient,
  trunkId: string,
  subPorts: readonly SubPort[],
  options: CallOptions = {},
): Promise<Trunk> {
  const res = await sc.request<Trunk>({
    method: 'PUT',
    path: action(trunkId, 'add_subports'),
    body: { sub_ports: subPorts },
    label: 'trunk_add_subports',
    signal: options.signal,
  });
  // Neutron answers with the trunk itself, not wrapped in {"trunk": …}.
  return res.body;
}

/** `PUT /v2.0/trunks/{id}/remove_subports` → the trunk without them. Only `port_id` is read. */
export async function removeSubports(
  sc: ServiceClient,
  trunkId: string,
  subPorts: readonly { port_id: string }[],
  options: CallOptions = {},
): Promise<Trunk> {
  const res = await sc.request<Trunk>({
    method: 'PUT',
    path: action(trunkId, 'remove_subports'),
    body: { sub_ports: subPorts.map((s) => ({ port_id: s.port_id })) },
    label: 'trunk_remove_subports',
    signal: options.signal,
  });
  return res.body;
}

/** `GET /v2.0/trunks/{id}/get_subports`. */
export async function getSubports(
  sc: ServiceClient,
  trunkId: string,
  options: CallOptions = {},
): Promise<SubPort[]> {
  const res = await sc.request<{ sub_ports: SubPort[] }>({
    method: 'GET',
    path: action(trunkId, 'get_subports'),
    label: 'trunk_get_subports',
    signal: options.signal,
  });
  return res.body.sub_ports;
}
