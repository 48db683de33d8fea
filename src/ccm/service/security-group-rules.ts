/**
 * The ingress rules of a Service's member security group (OCCM's `loadbalancer_sg.go`). Pure: the
 * controller reads the subnet first; the diff against what Neutron holds is the shared one
 * (src/openstack/services/securitygroup), with OCCM's options.
 *
 * Only ingress rules are managed. Neutron gives every new group two allow-all egress rules; they
 * are left as they are, since a port's groups add up and the node's own groups already decide egress.
 */
import { formatCidr, parseCidr } from '../../lib/cidr.ts';
import {
  ruleIdentity,
  type DesiredRule,
  type RulePlanOptions,
} from '../../openstack/services/securitygroup/index.ts';

/** OCCM's rules have no description and only ingress is managed. */
export const MEMBER_RULES: RulePlanOptions = { description: false, direction: 'ingress' };

export interface MemberRule {
  ethertype: 'IPv4' | 'IPv6';
  /** Neutron's lowercase name: tcp, udp, sctp. */
  protocol: string;
  /** A NodePort (or the healthCheckNodePort): one port, never a range. */
  port: number;
  /** Normalized as Neutron prints a network (`10.0.0.0/8`). */
  remoteIpPrefix: string;
}

export interface MemberRuleInputs {
  /** The Service ports; a nodePort of 0 (allocateLoadBalancerNodePorts=false) gets no rule. */
  ports: readonly { protocol: string; nodePort: number }[];
  /** The member subnet's CIDR: amphorae reach the members from their port on it. */
  subnetCidr: string;
  /**
   * With lb-provider=ovn the client's own address reaches the member (OVN does not proxy), so the
   * NodePorts open to loadBalancerSourceRanges instead of the subnet.
   */
  sourceRanges?: readonly string[] | undefined;
  /** ETP=Local: kube-proxy's health check port, probed from the member subnet. */
  healthCheckNodePort?: number | undefined;
}

/** The rules the group must hold, without duplicates, in a stable order. */
export function memberRules(input: MemberRuleInputs): MemberRule[] {
  const out = new Map<string, MemberRule>();
  const add = (protocol: string, port: number, cidr: string) => {
    const parsed = parseCidr(cidr);
    // Source ranges were validated by the parser and the subnet comes from Neutron: an invalid one cannot open anything.
    if (!parsed) return;
    const rule: MemberRule = {
      ethertype: parsed.family === 6 ? 'IPv6' : 'IPv4',
      protocol: protocol.toLowerCase(),
      port,
      remoteIpPrefix: formatCidr(parsed),
    };
    out.set(ruleIdentity(desiredRule(rule), MEMBER_RULES), rule);
  };
  const sources = input.sourceRanges ?? [input.subnetCidr];
  for (const p of input.ports) {
    if (p.nodePort === 0) continue;
    for (const cidr of sources) add(p.protocol, p.nodePort, cidr);
  }
  if (input.healthCheckNodePort) add('TCP', input.healthCheckNodePort, input.subnetCidr);
  return [...out.values()];
}

/** The rule in Neutron's fields: one port, from a prefix. */
export function desiredRule(r: MemberRule): DesiredRule {
  return {
    direction: 'ingress',
    ethertype: r.ethertype,
    protocol: r.protocol,
    port_range_min: r.port,
    port_range_max: r.port,
    remote_ip_prefix: r.remoteIpPrefix,
  };
}
