/**
 * The ingress rules of a Service's member security group (OCCM's `loadbalancer_sg.go`), and their
 * diff against what Neutron holds. Pure: the controller reads the subnet and the group first.
 *
 * Only ingress rules are managed. Neutron gives every new group two allow-all egress rules; they
 * are left as they are, since a port's groups add up and the node's own groups already decide egress.
 */
import { formatCidr, parseCidr } from '../../lib/cidr.ts';

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
    out.set(ruleKey(rule), rule);
  };
  const sources = input.sourceRanges ?? [input.subnetCidr];
  for (const p of input.ports) {
    if (p.nodePort === 0) continue;
    for (const cidr of sources) add(p.protocol, p.nodePort, cidr);
  }
  if (input.healthCheckNodePort) add('TCP', input.healthCheckNodePort, input.subnetCidr);
  return [...out.values()];
}

/** What Neutron holds of a rule (a subset of its wire shape). */
export interface ExistingRule {
  id: string;
  direction: string;
  ethertype: string;
  protocol: string | null;
  port_range_min: number | null;
  port_range_max: number | null;
  remote_ip_prefix: string | null;
  remote_group_id: string | null;
}

export interface RuleDiff {
  create: MemberRule[];
  /** Ingress rules no Service port asks for (egress rules are never listed). */
  remove: ExistingRule[];
}

export function diffRules(desired: readonly MemberRule[], existing: readonly ExistingRule[]): RuleDiff {
  const held = new Map<string, ExistingRule>();
  const remove: ExistingRule[] = [];
  for (const r of existing) {
    if (r.direction !== 'ingress') continue;
    const key = existingKey(r);
    // A second copy of a wanted rule (only a cloud without duplicate checks has one) goes too.
    if (key === undefined || held.has(key)) remove.push(r);
    else held.set(key, r);
  }
  const wanted = new Set(desired.map(ruleKey));
  for (const [key, r] of held) if (!wanted.has(key)) remove.push(r);
  return { create: desired.filter((d) => !held.has(ruleKey(d))), remove };
}

export function ruleKey(r: MemberRule): string {
  return `${r.ethertype} ${r.protocol} ${r.port} ${r.remoteIpPrefix}`;
}

/** Neutron may answer protocols by number and keeps "any" prefixes as null. */
const PROTOCOL_NUMBERS: Readonly<Record<string, string>> = { '6': 'tcp', '17': 'udp', '132': 'sctp' };

function existingKey(r: ExistingRule): string | undefined {
  if (r.remote_group_id || r.protocol === null) return undefined;
  if (r.port_range_min === null || r.port_range_min !== r.port_range_max) return undefined;
  if (r.ethertype !== 'IPv4' && r.ethertype !== 'IPv6') return undefined;
  const protocol = PROTOCOL_NUMBERS[r.protocol] ?? r.protocol.toLowerCase();
  const prefix = r.remote_ip_prefix ?? (r.ethertype === 'IPv6' ? '::/0' : '0.0.0.0/0');
  const parsed = parseCidr(prefix);
  if (!parsed) return undefined;
  return ruleKey({
    ethertype: r.ethertype,
    protocol,
    port: r.port_range_min,
    remoteIpPrefix: formatCidr(parsed),
  });
}
