/**
 * Neutron networks. https://docs.openstack.org/api-ref/network/v2/#networks
 * The `provider:*` fields need an admin to set (and to read); `router:external` marks a network
 * floating IPs and router gateways come from.
 */
import { neutronResource, type ListParams, type TagFilters } from './resource.ts';

export interface Network {
  id: string;
  name: string;
  description: string;
  project_id: string;
  admin_state_up: boolean;
  /** `ACTIVE` as soon as created; Neutron has no transition to wait for. */
  status: string;
  subnets: string[];
  shared: boolean;
  mtu?: number;
  port_security_enabled?: boolean;
  'router:external'?: boolean;
  /** Admin only, like the other `provider:*` fields. */
  'provider:network_type'?: string | null;
  'provider:physical_network'?: string | null;
  'provider:segmentation_id'?: number | null;
  availability_zone_hints?: string[];
  availability_zones?: string[];
  is_default?: boolean;
  tags: string[];
  created_at?: string;
  updated_at?: string;
  revision_number: number;
}

/** What a network create and update share. */
interface NetworkWritable {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  shared?: boolean;
  mtu?: number;
  port_security_enabled?: boolean;
  'router:external'?: boolean;
}

/** Fields not declared here are sent as given (Neutron rejects unknown ones with a 400). */
export interface NetworkCreateOpts extends NetworkWritable {
  'provider:network_type'?: string;
  'provider:physical_network'?: string;
  'provider:segmentation_id'?: number;
  availability_zone_hints?: string[];
  /** Only an admin may create for another project. */
  project_id?: string;
  [field: string]: unknown;
}

export interface NetworkUpdateOpts extends NetworkWritable {
  [field: string]: unknown;
}

export interface NetworkListQuery extends ListParams, TagFilters {
  id?: string | readonly string[];
  name?: string | readonly string[];
  project_id?: string;
  status?: string;
  shared?: boolean;
  admin_state_up?: boolean;
  'router:external'?: boolean;
  'provider:network_type'?: string;
  'provider:physical_network'?: string;
  'provider:segmentation_id'?: number;
  mtu?: number;
  description?: string;
}

export const networks = neutronResource<Network, NetworkCreateOpts, NetworkUpdateOpts, NetworkListQuery>({
  path: 'networks',
  key: 'network',
  collection: 'networks',
  label: 'network',
});
