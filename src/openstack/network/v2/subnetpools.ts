/**
 * Neutron subnet pools (the `subnet_allocation` extension): prefixes a subnet is carved from when it
 * is created with `subnetpool_id` (and optionally `prefixlen`) instead of a `cidr`.
 * https://docs.openstack.org/api-ref/network/v2/#subnet-pools-extension-subnetpools
 */
import { neutronResource, type ListParams, type TagFilters } from './resource.ts';

export interface SubnetPool {
  id: string;
  name: string;
  description: string;
  project_id: string;
  /** Inferred from the prefixes. */
  ip_version: 4 | 6;
  /** CIDRs, compacted by Neutron (adjacent blocks merged). */
  prefixes: string[];
  /**
   * The length a subnet gets when it asks for neither `cidr` nor `prefixlen`. Real Neutron sends
   * the three lengths as JSON strings (`"24"`); the client hands them over as numbers.
   */
  default_prefixlen: number;
  min_prefixlen: number;
  max_prefixlen: number;
  /** The family's default pool (`use_default_subnetpool`). */
  is_default: boolean;
  shared: boolean;
  /** Per-project quota in /32s (IPv4) or /64s (IPv6); null is unlimited. */
  default_quota: number | null;
  address_scope_id: string | null;
  tags: string[];
  created_at?: string;
  updated_at?: string;
  revision_number: number;
}

interface SubnetPoolWritable {
  name?: string;
  description?: string;
  prefixes?: string[];
  default_prefixlen?: number;
  min_prefixlen?: number;
  max_prefixlen?: number;
  default_quota?: number | null;
  /** Admin only. */
  is_default?: boolean;
  address_scope_id?: string | null;
}

/** Fields not declared here are sent as given (Neutron rejects unknown ones with a 400). */
export interface SubnetPoolCreateOpts extends SubnetPoolWritable {
  prefixes: string[];
  /** Admin only. */
  shared?: boolean;
  project_id?: string;
  [field: string]: unknown;
}

/** New prefixes must contain the old ones (a pool only grows). */
export interface SubnetPoolUpdateOpts extends SubnetPoolWritable {
  [field: string]: unknown;
}

export interface SubnetPoolListQuery extends ListParams, TagFilters {
  id?: string | readonly string[];
  name?: string | readonly string[];
  project_id?: string;
  ip_version?: 4 | 6;
  is_default?: boolean;
  shared?: boolean;
  address_scope_id?: string;
  description?: string;
}

const PREFIX_LENGTHS = ['default_prefixlen', 'min_prefixlen', 'max_prefixlen'] as const;

/** A subnet pool as Neutron sent it, its prefix lengths made numbers (gophercloud reads both forms too). */
function readSubnetPool(wire: unknown): SubnetPool {
  const pool = { ...(wire as Record<string, unknown>) };
  for (const field of PREFIX_LENGTHS) {
    const value = pool[field];
    if (typeof value === 'string' && /^\d+$/.test(value)) pool[field] = Number(value);
  }
  return pool as unknown as SubnetPool;
}

export const subnetPools = neutronResource<
  SubnetPool,
  SubnetPoolCreateOpts,
  SubnetPoolUpdateOpts,
  SubnetPoolListQuery
>({
  path: 'subnetpools',
  key: 'subnetpool',
  collection: 'subnetpools',
  label: 'subnetpool',
  read: readSubnetPool,
});
