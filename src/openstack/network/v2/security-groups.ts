/** Neutron security groups. https://docs.openstack.org/api-ref/network/v2/#security-groups-security-groups */
import { neutronResource, type ListParams, type TagFilters } from './resource.ts';
import type { SecurityGroupRule } from './security-group-rules.ts';

export interface SecurityGroup {
  id: string;
  name: string;
  description: string;
  project_id: string;
  /** A new group comes with two egress rules (IPv4 and IPv6, anything). */
  security_group_rules: SecurityGroupRule[];
  stateful?: boolean;
  shared?: boolean;
  tags: string[];
  created_at?: string;
  updated_at?: string;
  revision_number: number;
}

/** Fields not declared here are sent as given (Neutron rejects unknown ones with a 400). */
export interface SecurityGroupCreateOpts {
  name: string;
  description?: string;
  stateful?: boolean;
  project_id?: string;
  [field: string]: unknown;
}

export interface SecurityGroupUpdateOpts {
  name?: string;
  description?: string;
  stateful?: boolean;
  [field: string]: unknown;
}

export interface SecurityGroupListQuery extends ListParams, TagFilters {
  id?: string | readonly string[];
  name?: string | readonly string[];
  project_id?: string;
  description?: string;
  stateful?: boolean;
}

export const securityGroups = neutronResource<
  SecurityGroup,
  SecurityGroupCreateOpts,
  SecurityGroupUpdateOpts,
  SecurityGroupListQuery
>({
  path: 'security-groups',
  key: 'security_group',
  collection: 'security_groups',
  label: 'security_group',
});
