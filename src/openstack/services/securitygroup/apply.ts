/**
 * Writes a rule plan to one group: the deletes first (a rule allowing the same traffic as a new one,
 * say with another description, would make Neutron refuse the new one), then the creates. A rule
 * already gone, or already there (a pass cut short after its create), is no error; anything else
 * (a quota among them) fails the pass.
 */
import type { CallOptions } from '../../core/call-options.ts';
import { isNotFound, OpenStackHttpError } from '../../core/errors.ts';
import type { NetworkV2 } from '../../network/v2/index.ts';
import type { SecurityGroupRuleCreateOpts } from '../../network/v2/security-group-rules.ts';
import type { DesiredRule, RulePlan } from './rules.ts';

/** The part of the client the apply step uses. */
export interface SecurityGroupApi {
  readonly network: NetworkV2;
}

export interface ApplyOutcome {
  /** Rules this call created and deleted (a lost race counts in neither). */
  created: number;
  deleted: number;
}

/** The create request of a desired rule: "any" fields are left out, as Neutron defaults them. */
export function ruleCreateBody(groupId: string, r: DesiredRule): SecurityGroupRuleCreateOpts {
  const body: SecurityGroupRuleCreateOpts = {
    security_group_id: groupId,
    direction: r.direction,
    ethertype: r.ethertype,
  };
  if (r.description) body.description = r.description;
  if (r.protocol !== null && r.protocol !== undefined && r.protocol !== '') body.protocol = r.protocol;
  if (r.port_range_min !== null && r.port_range_min !== undefined) body.port_range_min = r.port_range_min;
  if (r.port_range_max !== null && r.port_range_max !== undefined) body.port_range_max = r.port_range_max;
  if (r.remote_ip_prefix) body.remote_ip_prefix = r.remote_ip_prefix;
  if (r.remote_group_id) body.remote_group_id = r.remote_group_id;
  return body;
}

export async function applyRulePlan(
  api: SecurityGroupApi,
  groupId: string,
  plan: RulePlan,
  options: CallOptions = {},
): Promise<ApplyOutcome> {
  const out: ApplyOutcome = { created: 0, deleted: 0 };
  for (const r of plan.delete) {
    try {
      await api.network.securityGroupRules.delete(r.id, options);
      out.deleted++;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  for (const r of plan.create) {
    try {
      await api.network.securityGroupRules.create(ruleCreateBody(groupId, r), options);
      out.created++;
    } catch (err) {
      if (!(OpenStackHttpError.is(err) && err.errorType === 'SecurityGroupRuleExists')) throw err;
    }
  }
  return out;
}
