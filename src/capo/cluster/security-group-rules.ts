/**
 * The rules of CAPO's managed security groups, as CAPO's `generateDesiredSecGroups` and
 * `securitygroups_rules.go` make them (read from CAPO's newest `pkg/cloud/services/networking`):
 *
 * | group        | rules                                                                                   |
 * | ------------ | --------------------------------------------------------------------------------------- |
 * | every group  | egress IPv4 and IPv6 to anywhere ("Full open")                                          |
 * | controlplane | TCP 6443 from anywhere; the API load balancer's additionalPorts (TCP) from anywhere;     |
 * |              | etcd TCP 2379–2380 and kubelet TCP 10250 from controlplane; kubelet from worker          |
 * | worker       | NodePorts TCP/UDP 30000–32767 from every IPv4 subnet of the cluster network and from the |
 * |              | worker and controlplane groups; kubelet TCP 10250 from worker and controlplane            |
 * | bastion      | SSH TCP 22 from anywhere                                                                |
 * | cp, worker   | SSH TCP 22 from the bastion group, while the bastion is enabled                          |
 *
 * `allowAllInClusterTraffic` replaces the etcd and kubelet rules with "In-cluster Ingress": any
 * ingress from the controlplane and worker groups. The user's `controlPlaneNodesSecurityGroupRules`,
 * `workerNodesSecurityGroupRules` and `allNodesSecurityGroupRules` (both groups) are appended; a
 * rule with `remoteManagedGroups` becomes one rule per named group.
 *
 * Pure: the group ids come in, the rules go out; ensure is in security-groups.ts.
 */
import { parseCidr } from '../../lib/cidr.ts';
import {
  ruleIdentity,
  type DesiredRule,
  type RulePlanOptions,
} from '../../openstack/services/securitygroup/index.ts';
import type { OpenStackClusterSpec, SecurityGroupRuleSpec } from '../api/index.ts';
import type { ManagedSecurityGroupRole } from './names.ts';

/** A rule with every reference resolved, in CAPO's shape: 0 and '' mean unset. */
export interface ResolvedRule {
  description: string;
  direction: 'ingress' | 'egress';
  etherType: 'IPv4' | 'IPv6';
  portRangeMin: number;
  portRangeMax: number;
  protocol: string;
  remoteGroupID: string;
  remoteIPPrefix: string;
}

export type GroupIDs = Partial<Record<ManagedSecurityGroupRole, string>>;

export class RuleSpecError extends Error {
  override readonly name = 'RuleSpecError';
  static is(this: void, err: unknown): err is RuleSpecError {
    return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'RuleSpecError';
  }
}

function rule(r: Partial<ResolvedRule> & Pick<ResolvedRule, 'description'>): ResolvedRule {
  return {
    direction: 'ingress',
    etherType: 'IPv4',
    portRangeMin: 0,
    portRangeMax: 0,
    protocol: '',
    remoteGroupID: '',
    remoteIPPrefix: '',
    ...r,
  };
}

const tcp = (description: string, min: number, max: number, remote: Partial<ResolvedRule> = {}) =>
  rule({ description, protocol: 'tcp', portRangeMin: min, portRangeMax: max, ...remote });

export const DEFAULT_RULES: readonly ResolvedRule[] = [
  rule({ description: 'Full open', direction: 'egress', etherType: 'IPv4' }),
  rule({ description: 'Full open', direction: 'egress', etherType: 'IPv6' }),
];

const KUBELET = 'Kubelet API';
const NODE_PORTS = 'Node Port Services';
const IN_CLUSTER = 'In-cluster Ingress';

function nodePorts(remote: Partial<ResolvedRule>): ResolvedRule[] {
  return ['tcp', 'udp'].map((protocol) =>
    rule({ description: NODE_PORTS, protocol, portRangeMin: 30000, portRangeMax: 32767, ...remote }),
  );
}

/** k8s.io/utils/net's IsIPv4CIDRString: NodePorts are opened to the cluster's IPv4 subnets only. */
const isIPv4Cidr = (cidr: string) => parseCidr(cidr, { sloppy: true })?.family === 4;

/** The user's extra rules, resolved against the managed groups that exist. */
export function rulesFromSpecs(
  specs: readonly SecurityGroupRuleSpec[] | undefined,
  ids: GroupIDs,
): ResolvedRule[] {
  const out: ResolvedRule[] = [];
  for (const s of specs ?? []) {
    const base = rule({
      description: s.description ?? '',
      direction: s.direction,
      etherType: s.etherType ?? 'IPv4',
      portRangeMin: s.portRangeMin ?? 0,
      portRangeMax: s.portRangeMax ?? 0,
      protocol: s.protocol ?? '',
      remoteGroupID: s.remoteGroupID ?? '',
      remoteIPPrefix: s.remoteIPPrefix ?? '',
    });
    const managed = s.remoteManagedGroups ?? [];
    if (managed.length === 0) {
      out.push(base);
      continue;
    }
    if (s.remoteGroupID)
      throw new RuleSpecError(
        `rule ${s.name}: remoteGroupID must not be set when remoteManagedGroups is set`,
      );
    for (const group of managed) {
      const id = ids[group];
      if (!id)
        throw new RuleSpecError(
          `rule ${s.name}: remoteManagedGroups names ${group}, which is not a managed security group of this cluster` +
            (group === 'bastion' ? ' (the bastion is disabled)' : ''),
        );
      out.push({ ...base, remoteGroupID: id });
    }
  }
  return out;
}

export interface DesiredInput {
  spec: OpenStackClusterSpec;
  ids: GroupIDs;
  /** CIDRs of the cluster network's subnets (status.network.subnets). */
  subnetCidrs: readonly string[];
  bastionEnabled: boolean;
}

/** The desired rules of each managed group (bastion only while it is enabled), without repeats. */
export function desiredRules(input: DesiredInput): Partial<Record<ManagedSecurityGroupRole, ResolvedRule[]>> {
  const { spec, ids, bastionEnabled } = input;
  const managed = spec.managedSecurityGroups;
  if (!managed) return {};
  const cp = ids.controlplane ?? '';
  const worker = ids.worker ?? '';
  const controlPlane: ResolvedRule[] = [...DEFAULT_RULES, tcp('Kubernetes API', 6443, 6443)];
  const workers: ResolvedRule[] = [...DEFAULT_RULES];

  for (const cidr of input.subnetCidrs)
    if (isIPv4Cidr(cidr)) workers.push(...nodePorts({ remoteIPPrefix: cidr }));
  workers.push(...nodePorts({ remoteGroupID: worker }), ...nodePorts({ remoteGroupID: cp }));

  const lb = spec.apiServerLoadBalancer;
  if (lb && lb.enabled !== false)
    for (const p of lb.additionalPorts ?? []) controlPlane.push(tcp('Additional port', p, p));

  if (managed.allowAllInClusterTraffic) {
    controlPlane.push(
      rule({ description: IN_CLUSTER, remoteGroupID: cp }),
      rule({ description: IN_CLUSTER, remoteGroupID: worker }),
    );
    workers.push(
      rule({ description: IN_CLUSTER, remoteGroupID: worker }),
      rule({ description: IN_CLUSTER, remoteGroupID: cp }),
    );
  } else {
    controlPlane.push(
      tcp('Etcd', 2379, 2380, { remoteGroupID: cp }),
      tcp(KUBELET, 10250, 10250, { remoteGroupID: cp }),
      tcp(KUBELET, 10250, 10250, { remoteGroupID: worker }),
    );
    workers.push(
      tcp(KUBELET, 10250, 10250, { remoteGroupID: worker }),
      tcp(KUBELET, 10250, 10250, { remoteGroupID: cp }),
    );
  }

  controlPlane.push(...rulesFromSpecs(managed.controlPlaneNodesSecurityGroupRules, ids));
  workers.push(...rulesFromSpecs(managed.workerNodesSecurityGroupRules, ids));
  const allNodes = rulesFromSpecs(managed.allNodesSecurityGroupRules, ids);
  controlPlane.push(...allNodes);
  workers.push(...allNodes);

  const out: Partial<Record<ManagedSecurityGroupRole, ResolvedRule[]>> = {};
  if (bastionEnabled) {
    const ssh = tcp('SSH', 22, 22, { remoteGroupID: ids.bastion ?? '' });
    controlPlane.push(ssh);
    workers.push(ssh);
    out.bastion = unique([tcp('SSH', 22, 22), ...DEFAULT_RULES]);
  }
  out.controlplane = unique(controlPlane);
  out.worker = unique(workers);
  return out;
}

/** CAPO manages every rule of its groups, and a rule's description is part of it. */
export const CAPO_RULES: RulePlanOptions = { description: true };

/** The rule in Neutron's fields: CAPO's 0 and '' are "any". */
export function desiredRule(r: ResolvedRule): DesiredRule {
  return {
    direction: r.direction,
    ethertype: r.etherType,
    description: r.description,
    protocol: r.protocol || null,
    port_range_min: r.portRangeMin || null,
    port_range_max: r.portRangeMax || null,
    remote_ip_prefix: r.remoteIPPrefix || null,
    remote_group_id: r.remoteGroupID || null,
  };
}

function unique(rules: readonly ResolvedRule[]): ResolvedRule[] {
  return [...new Map(rules.map((r) => [ruleIdentity(desiredRule(r), CAPO_RULES), r])).values()];
}
