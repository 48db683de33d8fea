/**
 * A NetworkPolicy as the security-group rules of its KuryrNetworkPolicy (`spec.ingressSgRules`,
 * `spec.egressSgRules`), as upstream's NetworkPolicyDriver parses it. Pure: the caller gathers the
 * pods (with the IPs of their VIFs), namespaces (with their KuryrNetwork CIDRs), Services and the
 * cluster's CIDRs; the kuryrnetworkpolicy controller writes the result to Neutron.
 *
 * Every remote is a `remote_ip_prefix`, never a remote group (§3.7): a pod is its IP, a namespace
 * its subnet CIDR (or its pods' IPs when namespaces share the pod subnet), an ipBlock its CIDR with
 * the `except` networks cut out, `namespaceSelector: {}` the whole cluster (pod CIDRs and the
 * service subnet). Named ports are resolved against the container ports of the pods behind the
 * traffic's destination: the pods the policy selects for ingress, the peer's pods for egress.
 *
 * Where upstream's parser and Kubernetes disagree we follow Kubernetes, each named below:
 * a direction not in `policyTypes` is open (upstream: only a policy of type `[Egress]` opens
 * ingress), every empty rule opens its direction (upstream: only the first), an ipBlock with
 * several exceptions loses all of them (upstream excluded each from the block on its own and
 * joined the results, which gave back the whole block), a namespaceSelector with a podSelector
 * takes the pods of every matching namespace (upstream: the last one's), `endPort` is a range
 * (upstream ignored it), and a pod is `/32` (or `/128`) as Neutron stores it. The egress rules
 * to a Service's cluster IP carry the Service's own port — the one a pod's traffic to the VIP
 * goes to — rather than the pod port the policy names.
 */
import type {
  V1LabelSelector,
  V1NetworkPolicy,
  V1NetworkPolicyPeer,
  V1NetworkPolicyPort,
} from '@kubernetes/client-node';
import { cidrContains, excludeCidrs, formatCidr, parseCidr, parseIp, type Cidr } from '../../lib/cidr.ts';
import { matchesLabelSelector } from '../../kube/selector.ts';
import { ruleIdentity } from '../../openstack/services/securitygroup/index.ts';

export type Direction = 'ingress' | 'egress';
export type EtherType = 'IPv4' | 'IPv6';

/** Upstream's description of every rule it writes for a policy. */
export const POLICY_RULE_DESCRIPTION = 'Kuryr-Kubernetes NetPolicy SG rule';

/** `sgRule` of a KuryrNetworkPolicy rule: Neutron's fields; absent is "any". */
export interface PolicySgRule {
  ethertype: EtherType;
  direction: Direction;
  description: string;
  protocol?: string;
  port_range_min?: number;
  port_range_max?: number;
  remote_ip_prefix?: string;
}

export interface AffectedPod {
  podIP: string;
  podNamespace: string;
}

/** One entry of `spec.ingressSgRules` / `spec.egressSgRules`. */
export interface PolicyRule {
  sgRule: PolicySgRule;
  /** The namespace whose pods or subnet the remote is. */
  namespace?: string;
  /** For a named port: the pods whose container port it resolved to. */
  affectedPods?: AffectedPod[];
}

export interface ContainerPort {
  name?: string | undefined;
  containerPort: number;
  protocol?: string | undefined;
}

/** A pod on the pod network (not host network, scheduled, not finished), as the rules see it. */
export interface PolicyPod {
  namespace: string;
  name: string;
  labels: Readonly<Record<string, string>>;
  /** The address of its default VIF (or status.podIP); none yet: it is no remote until it has one. */
  ip?: string | undefined;
  ports: readonly ContainerPort[];
}

export interface PolicyNamespace {
  name: string;
  labels: Readonly<Record<string, string>>;
  /** Its KuryrNetwork's `status.subnetCIDR` when namespaces have networks of their own. */
  cidr?: string | undefined;
}

export interface PolicyServicePort {
  port: number;
  protocol?: string | undefined;
  targetPort?: number | string | undefined;
}

export interface PolicyService {
  namespace: string;
  name: string;
  /** `None` for a headless Service. */
  clusterIP?: string | undefined;
  selector?: Readonly<Record<string, string>> | undefined;
  ports: readonly PolicyServicePort[];
  /** The endpoint addresses of a Service without a selector. */
  endpointIps?: readonly string[] | undefined;
  deleting?: boolean | undefined;
}

/** The cluster a policy is read against. */
export interface PolicyWorld {
  pods: readonly PolicyPod[];
  namespaces: readonly PolicyNamespace[];
  services: readonly PolicyService[];
}

export interface PolicyNetworks {
  /** `[neutron_defaults] service_subnet`'s CIDR. */
  serviceSubnet?: string | undefined;
  /** The worker nodes' subnets (`[pod_vif_nested] worker_nodes_subnets`), whose hosts reach every pod. */
  workerSubnets: readonly string[];
  /** Where every pod's address comes from: the pod subnet pool's prefixes, or the pod subnet. */
  podCidrs: readonly string[];
}

export interface TranslateOptions {
  /** `[octavia_defaults] enforce_sg_rules`. */
  enforceSgRules: boolean;
}

export interface PolicyRules {
  ingressSgRules: PolicyRule[];
  egressSgRules: PolicyRule[];
  /** What of the policy could not be expressed, for an Event on it. */
  problems: string[];
}

/** The wire form of a rule: `from`/`to` as the API sends them (client-node's models rename `from`). */
interface WireRule {
  from?: V1NetworkPolicyPeer[];
  to?: V1NetworkPolicyPeer[];
  ports?: V1NetworkPolicyPort[];
}

/** A remote of a rule: a network and the pods behind it (for named ports and Service rules). */
interface Remote {
  kind: 'anywhere' | 'cluster' | 'pod' | 'namespace' | 'block' | 'vip';
  /** No prefix: every address of both families. */
  cidr: Cidr | undefined;
  namespace?: string | undefined;
  pods: readonly PolicyPod[];
}

/** The types a policy applies to: as stored, or as the API server defaults them when absent. */
export function policyTypes(policy: V1NetworkPolicy): Direction[] {
  const spec = policy.spec;
  const types = spec?.policyTypes ?? (spec?.egress !== undefined ? ['Ingress', 'Egress'] : ['Ingress']);
  return types.map((t) => t.toLowerCase()).filter((t): t is Direction => t === 'ingress' || t === 'egress');
}

/** Whether the policy applies to the pod: its namespace and its podSelector (none selects all). */
export function policySelectsPod(
  policy: {
    metadata?: { namespace?: string | undefined } | undefined;
    spec?: { podSelector?: V1LabelSelector } | undefined;
  },
  pod: { namespace: string; labels: Readonly<Record<string, string>> },
): boolean {
  return (
    policy.metadata?.namespace === pod.namespace &&
    matchesLabelSelector(policy.spec?.podSelector ?? {}, pod.labels)
  );
}

export function translatePolicy(
  policy: V1NetworkPolicy,
  world: PolicyWorld,
  networks: PolicyNetworks,
  opts: TranslateOptions,
): PolicyRules {
  const t = new Translation(policy, world, networks, opts);
  return t.run();
}

class Translation {
  private readonly problems: string[] = [];
  private readonly namespace: string;
  private readonly pods: PolicyPod[];
  private readonly namespaces: PolicyNamespace[];

  private readonly policy: V1NetworkPolicy;
  private readonly world: PolicyWorld;
  private readonly networks: PolicyNetworks;
  private readonly opts: TranslateOptions;

  constructor(policy: V1NetworkPolicy, world: PolicyWorld, networks: PolicyNetworks, opts: TranslateOptions) {
    this.policy = policy;
    this.world = world;
    this.networks = networks;
    this.opts = opts;
    this.namespace = policy.metadata?.namespace ?? '';
    // Sorted, so a policy over the same cluster always gives the same rules in the same order.
    this.pods = [...world.pods].sort((a, b) => key(a).localeCompare(key(b)));
    this.namespaces = [...world.namespaces].sort((a, b) => a.name.localeCompare(b.name));
  }

  run(): PolicyRules {
    const types = policyTypes(this.policy);
    const ingress = this.direction('ingress', types);
    for (const r of this.defaultIngress()) ingress.add(r);
    const egress = this.direction('egress', types);
    return { ingressSgRules: ingress.rules(), egressSgRules: egress.rules(), problems: this.problems };
  }

  private direction(dir: Direction, types: readonly Direction[]): RuleSet {
    const out = new RuleSet();
    if (!types.includes(dir)) {
      // A policy that does not isolate this direction leaves it open.
      this.allowAll(out, dir);
      return out;
    }
    const blocks = ((dir === 'ingress' ? this.policy.spec?.ingress : this.policy.spec?.egress) ??
      []) as WireRule[];
    for (const block of blocks) {
      const peers = (dir === 'ingress' ? block.from : block.to) ?? [];
      const ports = block.ports ?? [];
      if (peers.length === 0 && ports.length === 0) {
        this.allowAll(out, dir);
        continue;
      }
      const remotes = peers.length === 0 ? [this.anywhere()] : peers.flatMap((p) => this.resolvePeer(p));
      for (const port of ports.length === 0 ? [undefined] : ports) {
        for (const remote of remotes) this.emit(out, dir, remote, port, peers.length === 0);
      }
    }
    return out;
  }

  private allowAll(out: RuleSet, dir: Direction): void {
    for (const ethertype of ['IPv4', 'IPv6'] as const) {
      out.add({ sgRule: { ethertype, direction: dir, description: POLICY_RULE_DESCRIPTION } });
    }
  }

  /** Ingress the pods always need: from the service subnet (load balancers) and the worker nodes (kubelet probes). */
  private defaultIngress(): PolicyRule[] {
    const cidrs: string[] = [];
    if (this.opts.enforceSgRules && this.networks.serviceSubnet) cidrs.push(this.networks.serviceSubnet);
    cidrs.push(...this.networks.workerSubnets);
    const rules: PolicyRule[] = [];
    for (const text of cidrs) {
      const cidr = parseCidr(text, { sloppy: true });
      if (cidr) rules.push({ sgRule: sgRule('ingress', cidr) });
    }
    if (!this.opts.enforceSgRules) {
      // Without the service subnet open, OVN's hairpin traffic comes from the Service's IP.
      for (const svc of this.world.services) {
        if (svc.namespace !== this.namespace || svc.deleting) continue;
        const ip = hostCidr(svc.clusterIP);
        if (ip)
          rules.push({
            sgRule: {
              ...sgRule('ingress', ip),
              description: `Allow traffic from local namespace service ${svc.name}`,
            },
          });
      }
    }
    return rules;
  }

  private anywhere(): Remote {
    return { kind: 'anywhere', cidr: undefined, pods: this.pods };
  }

  private resolvePeer(peer: V1NetworkPolicyPeer): Remote[] {
    if (peer.ipBlock) return this.resolveBlock(peer.ipBlock.cidr, peer.ipBlock.except ?? []);
    const nsSel = peer.namespaceSelector;
    const podSel = peer.podSelector;
    if (nsSel !== undefined && isEmpty(nsSel) && (podSel === undefined || isEmpty(podSel))) {
      // Every pod of the cluster and every Service.
      const cidrs = [
        ...this.networks.podCidrs,
        ...(this.networks.serviceSubnet ? [this.networks.serviceSubnet] : []),
      ];
      return cidrs.flatMap((text) => {
        const cidr = parseCidr(text, { sloppy: true });
        return cidr
          ? [{ kind: 'cluster' as const, cidr, pods: this.pods.filter((p) => inCidr(cidr, p.ip)) }]
          : [];
      });
    }
    const namespaces =
      nsSel === undefined
        ? this.namespaces.filter((n) => n.name === this.namespace)
        : this.namespaces.filter((n) => matchesLabelSelector(nsSel, n.labels));
    if (namespaces.length === 0 && nsSel === undefined) {
      // The policy's own namespace, even before its Namespace object is in the cache.
      namespaces.push({ name: this.namespace, labels: {} });
    }
    if (podSel !== undefined && !isEmpty(podSel)) {
      const names = new Set(namespaces.map((n) => n.name));
      return this.pods
        .filter((p) => names.has(p.namespace) && matchesLabelSelector(podSel, p.labels))
        .flatMap((p) => podRemote(p));
    }
    return namespaces.flatMap((ns) => this.namespaceRemotes(ns));
  }

  /** A namespace is its subnet when it has one, else each of its pods. */
  private namespaceRemotes(ns: PolicyNamespace): Remote[] {
    const pods = this.pods.filter((p) => p.namespace === ns.name);
    const cidr = ns.cidr ? parseCidr(ns.cidr, { sloppy: true }) : undefined;
    if (cidr) return [{ kind: 'namespace', cidr, namespace: ns.name, pods }];
    return pods.flatMap((p) => podRemote(p));
  }

  private resolveBlock(text: string, except: readonly string[]): Remote[] {
    const block = parseCidr(text, { sloppy: true });
    if (!block) {
      this.problems.push(`ipBlock cidr ${JSON.stringify(text)} is not a CIDR`);
      return [];
    }
    const excluded: Cidr[] = [];
    for (const e of except) {
      const cidr = parseCidr(e, { sloppy: true });
      if (cidr) excluded.push(cidr);
      else this.problems.push(`ipBlock except ${JSON.stringify(e)} is not a CIDR`);
    }
    return excludeCidrs(block, excluded).map((cidr) => ({
      kind: 'block' as const,
      cidr,
      pods: this.pods.filter((p) => inCidr(cidr, p.ip)),
    }));
  }

  private emit(
    out: RuleSet,
    dir: Direction,
    remote: Remote,
    port: V1NetworkPolicyPort | undefined,
    noPeers: boolean,
  ): void {
    const protocol = port ? (port.protocol ?? 'TCP').toLowerCase() : undefined;
    const named = typeof port?.port === 'string' && !/^\d+$/.test(port.port) ? port.port : undefined;
    if (named === undefined) {
      const min = port?.port === undefined ? undefined : Number(port.port);
      const max = min === undefined ? undefined : (port?.endPort ?? min);
      this.add(out, dir, remote, { protocol, min, max });
      if (dir === 'egress' && !noPeers)
        this.serviceEgress(out, remote, protocol, (t) => matchesNumber(t, min, max));
      return;
    }
    if (dir === 'egress' && remote.kind === 'block') {
      this.problems.push(`egress to an ipBlock on the named port ${JSON.stringify(named)} is not supported`);
      return;
    }
    // Ingress: the port is on the pods the policy selects; egress: on the pods the traffic goes to,
    // but not on those the policy itself selects (upstream leaves them out too).
    const targets =
      dir === 'ingress'
        ? this.pods.filter((p) => policySelectsPod(this.policy, p))
        : remote.pods.filter((p) => !policySelectsPod(this.policy, p));
    const byNumber = new Map<number, PolicyPod[]>();
    for (const pod of targets) {
      for (const cp of pod.ports) {
        if (cp.name !== named || (cp.protocol ?? 'TCP').toLowerCase() !== protocol) continue;
        const list = byNumber.get(cp.containerPort) ?? [];
        if (!list.includes(pod)) list.push(pod);
        byNumber.set(cp.containerPort, list);
      }
    }
    for (const [n, pods] of [...byNumber].sort(([a], [b]) => a - b)) {
      const affected = pods.filter((p) => p.ip).map((p) => ({ podIP: p.ip!, podNamespace: p.namespace }));
      this.add(out, dir, remote, { protocol, min: n, max: n }, affected);
    }
    if (dir === 'egress' && !noPeers) {
      const numbers = [...byNumber.keys()];
      this.serviceEgress(
        out,
        remote,
        protocol,
        (t) => t === named || (typeof t === 'number' && numbers.includes(t)),
      );
    }
  }

  private add(
    out: RuleSet,
    dir: Direction,
    remote: Remote,
    ports: { protocol: string | undefined; min: number | undefined; max: number | undefined },
    affectedPods?: AffectedPod[],
  ): void {
    const ethertypes: EtherType[] = remote.cidr ? [familyOf(remote.cidr)] : ['IPv4', 'IPv6'];
    for (const ethertype of ethertypes) {
      const rule: PolicySgRule = { ethertype, direction: dir, description: POLICY_RULE_DESCRIPTION };
      if (ports.protocol) rule.protocol = ports.protocol;
      if (ports.min !== undefined) {
        rule.port_range_min = ports.min;
        rule.port_range_max = ports.max ?? ports.min;
      }
      if (remote.cidr) rule.remote_ip_prefix = formatCidr(remote.cidr);
      const entry: PolicyRule = { sgRule: rule };
      if (remote.namespace) entry.namespace = remote.namespace;
      if (affectedPods?.length) entry.affectedPods = affectedPods;
      out.add(entry);
    }
  }

  /**
   * Egress to the cluster IPs of the Services in front of a remote: a pod reaches a Service through
   * its load balancer's VIP, which no pod, namespace or ipBlock rule covers.
   */
  private serviceEgress(
    out: RuleSet,
    remote: Remote,
    protocol: string | undefined,
    targetMatches: (targetPort: number | string) => boolean,
  ): void {
    for (const svc of this.world.services) {
      const vip = hostCidr(svc.clusterIP);
      if (!vip || svc.deleting || !this.serviceInFront(svc, remote)) continue;
      if (protocol === undefined) {
        this.add(
          out,
          'egress',
          { kind: 'vip', cidr: vip, pods: [] },
          { protocol: undefined, min: undefined, max: undefined },
        );
        continue;
      }
      for (const sp of svc.ports) {
        if ((sp.protocol ?? 'TCP').toLowerCase() !== protocol) continue;
        if (!targetMatches(sp.targetPort ?? sp.port)) continue;
        this.add(
          out,
          'egress',
          { kind: 'vip', cidr: vip, pods: [] },
          { protocol, min: sp.port, max: sp.port },
        );
      }
    }
  }

  private serviceInFront(svc: PolicyService, remote: Remote): boolean {
    switch (remote.kind) {
      case 'pod': {
        const pod = remote.pods[0]!;
        return svc.selector
          ? svc.namespace === pod.namespace &&
              matchesLabelSelector({ matchLabels: { ...svc.selector } }, pod.labels)
          : (svc.endpointIps ?? []).includes(pod.ip ?? '');
      }
      case 'namespace':
        return svc.namespace === remote.namespace;
      case 'block': {
        const block = remote.cidr!;
        if (!svc.selector) {
          const ips = svc.endpointIps ?? [];
          return ips.length > 0 && ips.every((ip) => inCidr(block, ip));
        }
        return svc.namespace === this.namespace && this.selectedBy(svc).some((p) => inCidr(block, p.ip));
      }
      default:
        // The cluster's CIDRs hold the service subnet already; anywhere holds everything.
        return false;
    }
  }

  private selectedBy(svc: PolicyService): PolicyPod[] {
    const sel = svc.selector;
    if (!sel) return [];
    return this.pods.filter(
      (p) => p.namespace === svc.namespace && matchesLabelSelector({ matchLabels: { ...sel } }, p.labels),
    );
  }
}

/** The rules of one direction, each once (as Neutron compares them); a repeat adds its pods to the first. */
class RuleSet {
  private readonly byKey = new Map<string, PolicyRule>();

  add(rule: PolicyRule): void {
    const k = ruleIdentity(rule.sgRule, { description: false });
    const held = this.byKey.get(k);
    if (!held) {
      this.byKey.set(k, rule);
      return;
    }
    if (!rule.affectedPods) return;
    const pods = held.affectedPods ?? [];
    for (const p of rule.affectedPods) if (!pods.some((q) => q.podIP === p.podIP)) pods.push(p);
    held.affectedPods = pods;
  }

  rules(): PolicyRule[] {
    return [...this.byKey.values()];
  }
}

function key(p: PolicyPod): string {
  return `${p.namespace}/${p.name}`;
}

function isEmpty(sel: V1LabelSelector): boolean {
  return Object.keys(sel.matchLabels ?? {}).length === 0 && (sel.matchExpressions ?? []).length === 0;
}

function podRemote(p: PolicyPod): Remote[] {
  const cidr = hostCidr(p.ip);
  return cidr ? [{ kind: 'pod', cidr, namespace: p.namespace, pods: [p] }] : [];
}

/** An address as the network of that one host (`/32`, `/128`), as Neutron stores a bare IP. */
function hostCidr(ip: string | undefined): Cidr | undefined {
  if (!ip || ip === 'None') return undefined;
  const parsed = parseIp(ip, { sloppy: true });
  if (!parsed) return undefined;
  const text = parsed.family === 4 ? `${ip}/32` : `${ip}/128`;
  const cidr = parseCidr(text, { sloppy: true });
  return cidr ? { ...cidr, text: formatCidr(cidr) } : undefined;
}

function inCidr(cidr: Cidr, ip: string | undefined): boolean {
  const parsed = ip ? parseIp(ip, { sloppy: true }) : undefined;
  return parsed !== undefined && cidrContains(cidr, parsed);
}

function familyOf(cidr: Cidr): EtherType {
  return cidr.family === 4 ? 'IPv4' : 'IPv6';
}

function sgRule(direction: Direction, cidr: Cidr): PolicySgRule {
  return {
    ethertype: familyOf(cidr),
    direction,
    description: POLICY_RULE_DESCRIPTION,
    remote_ip_prefix: formatCidr(cidr),
  };
}

function matchesNumber(target: number | string, min: number | undefined, max: number | undefined): boolean {
  if (min === undefined) return true;
  return typeof target === 'number' && target >= min && target <= (max ?? min);
}
