/** Octavia L7 policies and their rules. https://docs.openstack.org/api-ref/load-balancer/v2/#layer-7-policies */
import type { IdRef } from './listeners.ts';
import {
  octaviaChildResource,
  octaviaResource,
  type ListParams,
  type OperatingStatus,
  type ProvisioningStatus,
  type TagFilters,
} from './resource.ts';

export type L7PolicyAction = 'REDIRECT_TO_POOL' | 'REDIRECT_TO_URL' | 'REDIRECT_PREFIX' | 'REJECT';
export type L7RuleType =
  | 'COOKIE'
  | 'FILE_TYPE'
  | 'HEADER'
  | 'HOST_NAME'
  | 'PATH'
  | 'SSL_CONN_HAS_CERT'
  | 'SSL_VERIFY_RESULT'
  | 'SSL_DN_FIELD';
export type L7CompareType = 'CONTAINS' | 'ENDS_WITH' | 'EQUAL_TO' | 'REGEX' | 'STARTS_WITH';

export interface L7Policy {
  id: string;
  name: string;
  description: string;
  project_id: string;
  listener_id: string;
  action: L7PolicyAction;
  position: number;
  redirect_pool_id: string | null;
  redirect_url: string | null;
  redirect_prefix: string | null;
  redirect_http_code: number | null;
  rules: IdRef[];
  admin_state_up: boolean;
  provisioning_status: ProvisioningStatus;
  operating_status: OperatingStatus;
  tags?: string[];
  created_at: string;
  updated_at: string | null;
}

export interface L7Rule {
  id: string;
  project_id: string;
  type: L7RuleType;
  compare_type: L7CompareType;
  key: string | null;
  value: string;
  invert: boolean;
  admin_state_up: boolean;
  provisioning_status: ProvisioningStatus;
  operating_status: OperatingStatus;
  tags?: string[];
  created_at: string;
  updated_at: string | null;
}

interface L7PolicyWritable {
  name?: string;
  description?: string;
  action?: L7PolicyAction;
  position?: number;
  redirect_pool_id?: string | null;
  redirect_url?: string | null;
  redirect_prefix?: string | null;
  redirect_http_code?: number | null;
  admin_state_up?: boolean;
  tags?: string[];
}

export interface L7RuleCreateOpts {
  type: L7RuleType;
  compare_type: L7CompareType;
  value: string;
  key?: string;
  invert?: boolean;
  admin_state_up?: boolean;
  tags?: string[];
  [field: string]: unknown;
}

export interface L7RuleUpdateOpts {
  type?: L7RuleType;
  compare_type?: L7CompareType;
  value?: string;
  key?: string | null;
  invert?: boolean;
  admin_state_up?: boolean;
  tags?: string[];
  [field: string]: unknown;
}

/** A policy inside a fully populated create (its listener is the enclosing one). */
export interface NestedL7PolicyCreateOpts extends L7PolicyWritable {
  action: L7PolicyAction;
  /**
   * Octavia Zed answers a plain policy create with nested rules with a 500 (`'dict' object has no
   * attribute '_sa_instance_state'`): there, create the policy, then each rule with `l7Rules.create`.
   */
  rules?: L7RuleCreateOpts[];
  [field: string]: unknown;
}

export interface L7PolicyCreateOpts extends NestedL7PolicyCreateOpts {
  listener_id: string;
  project_id?: string;
}

export interface L7PolicyUpdateOpts extends L7PolicyWritable {
  [field: string]: unknown;
}

export interface L7PolicyListQuery extends ListParams, TagFilters {
  id?: string;
  name?: string;
  listener_id?: string;
  action?: L7PolicyAction;
  provisioning_status?: ProvisioningStatus;
  project_id?: string;
}

export interface L7RuleListQuery extends ListParams, TagFilters {
  type?: L7RuleType;
  compare_type?: L7CompareType;
  value?: string;
  key?: string;
  provisioning_status?: ProvisioningStatus;
}

export const l7Policies = octaviaResource<
  L7Policy,
  L7PolicyCreateOpts,
  L7PolicyUpdateOpts,
  L7PolicyListQuery
>({
  collection: 'l7policies',
  key: 'l7policy',
  label: 'loadbalancer_l7policy',
});

export const l7Rules = octaviaChildResource<L7Rule, L7RuleCreateOpts, L7RuleUpdateOpts, L7RuleListQuery>({
  parent: 'l7policies',
  collection: 'rules',
  key: 'rule',
  label: 'loadbalancer_l7rule',
});
