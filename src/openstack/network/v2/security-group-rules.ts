/**
 * Neutron security group rules. They cannot be updated: replace a rule by creating the new one and
 * deleting the old. A rule identical to an existing one is a 409 `SecurityGroupRuleExists` whose
 * message names the existing rule's id.
 * https://docs.openstack.org/api-ref/network/v2/#security-group-rules-security-group-rules
 */
import { neutronResource, type ListParams } from './resource.ts';

export type Direction = 'ingress' | 'egress';
export type EtherType = 'IPv4' | 'IPv6';

export interface SecurityGroupRule {
  id: string;
  project_id: string;
  security_group_id: string;
  direction: Direction;
  ethertype: EtherType;
  /** `tcp`, `udp`, `icmp`, a number as a string, or null for any. */
  protocol: string | null;
  port_range_min: number | null;
  port_range_max: number | null;
  remote_ip_prefix: string | null;
  remote_group_id: string | null;
  remote_address_group_id?: string | null;
  normalized_cidr?: string | null;
  description: string | null;
  created_at?: string;
  updated_at?: string;
  revision_number: number;
}

/** Fields not declared here are sent as given (Neutron rejects unknown ones with a 400). */
export interface SecurityGroupRuleCreateOpts {
  security_group_id: string;
  direction: Direction;
  /** Defaults to IPv4. */
  ethertype?: EtherType;
  protocol?: string | number | null;
  port_range_min?: number | null;
  port_range_max?: number | null;
  remote_ip_prefix?: string | null;
  remote_group_id?: string | null;
  remote_address_group_id?: string | null;
  description?: string;
  project_id?: string;
  [field: string]: unknown;
}

export interface SecurityGroupRuleListQuery extends ListParams {
  id?: string | readonly string[];
  security_group_id?: string | readonly string[];
  direction?: Direction;
  ethertype?: EtherType;
  protocol?: string;
  port_range_min?: number;
  port_range_max?: number;
  remote_ip_prefix?: string;
  remote_group_id?: string;
  project_id?: string;
  description?: string;
}

export const securityGroupRules = neutronResource<
  SecurityGroupRule,
  SecurityGroupRuleCreateOpts,
  never,
  SecurityGroupRuleListQuery
>({
  path: 'security-group-rules',
  key: 'security_group_rule',
  collection: 'security_group_rules',
  label: 'security_group_rule',
});
