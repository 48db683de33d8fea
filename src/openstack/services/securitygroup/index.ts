/**
 * Security group rules shared by the parts that manage groups (the CCM's member groups, CAPO's
 * managed groups, Kuryr's network policies): rule identity as Neutron sees it, the pure plan, and
 * the apply step.
 */
export { applyRulePlan, ruleCreateBody, type ApplyOutcome, type SecurityGroupApi } from './apply.ts';
export {
  normalizeRule,
  planRules,
  ruleIdentity,
  type DesiredRule,
  type NormalizedRule,
  type RuleIdentityOptions,
  type RulePlan,
  type RulePlanOptions,
} from './rules.ts';
