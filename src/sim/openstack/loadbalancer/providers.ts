/**
 * Octavia's provider drivers as the API sees them: which options each accepts. A driver refusing
 * an option raises UnsupportedOptionError, which the API turns into a 501 naming the provider;
 * an action the driver does not implement at all is a 501 "does not support a requested action".
 * Messages are those of octavia's amphora driver and of openstack/ovn-octavia-provider.
 */
import { providerNotImplemented, providerUnsupportedOption } from './errors.ts';

export interface ProviderInfo {
  name: string;
  description: string;
}

export const PROVIDERS: readonly ProviderInfo[] = [
  { name: 'amphora', description: 'The Octavia Amphora driver.' },
  { name: 'octavia', description: 'Deprecated alias of the Octavia Amphora driver.' },
  { name: 'ovn', description: 'Octavia OVN driver.' },
  { name: 'noop_driver', description: 'The no-op driver.' },
];

export const DEFAULT_PROVIDER = 'amphora';

export function isEnabledProvider(name: string): boolean {
  return PROVIDERS.some((p) => p.name === name);
}

interface ListenerOptions {
  protocol?: string | undefined;
  allowed_cidrs?: string[] | null | undefined;
}

interface PoolOptions {
  protocol?: string | undefined;
  lb_algorithm?: string | undefined;
  session_persistence?: { type?: unknown } | null | undefined;
}

interface MemberOptions {
  monitor_address?: string | null | undefined;
  monitor_port?: number | null | undefined;
}

const AMPHORA_ALGORITHMS = ['ROUND_ROBIN', 'SOURCE_IP', 'LEAST_CONNECTIONS'];
const OVN_PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
const OVN_ALGORITHMS = ['SOURCE_IP_PORT'];
const OVN_HM_TYPES = ['UDP-CONNECT', 'TCP'];

/** Checks one provider applies on top of the API's own validation. */
export class ProviderDriver {
  readonly name: string;
  private readonly family: 'amphora' | 'ovn' | 'noop';

  constructor(name: string) {
    this.name = name;
    this.family = name === 'ovn' ? 'ovn' : name === 'noop_driver' ? 'noop' : 'amphora';
  }

  /** Name of the VIP port the provider creates in Neutron; undefined when the VIP is not real. */
  vipPortName(lbId: string): string | undefined {
    if (this.family === 'ovn') return `ovn-lb-vip-${lbId}`;
    if (this.family === 'amphora') return `octavia-lb-${lbId}`;
    return undefined;
  }

  listener(l: ListenerOptions): void {
    if (this.family !== 'ovn') return;
    if (l.protocol !== undefined && !OVN_PROTOCOLS.includes(l.protocol)) {
      this.unsupported(`OVN provider does not support ${l.protocol} protocol`);
    }
    if (l.allowed_cidrs && l.allowed_cidrs.length > 0) {
      this.unsupported('OVN provider does not support allowed_cidrs option');
    }
  }

  pool(p: PoolOptions): void {
    if (this.family === 'amphora') {
      if (p.lb_algorithm !== undefined && !AMPHORA_ALGORITHMS.includes(p.lb_algorithm)) {
        this.unsupported(`Amphora provider does not support ${p.lb_algorithm} algorithm.`);
      }
      return;
    }
    if (this.family !== 'ovn') return;
    if (p.protocol !== undefined && !OVN_PROTOCOLS.includes(p.protocol)) {
      this.unsupported(`OVN provider does not support ${p.protocol} protocol`);
    }
    if (p.lb_algorithm !== undefined && !OVN_ALGORITHMS.includes(p.lb_algorithm)) {
      this.unsupported(`OVN provider does not support ${p.lb_algorithm} algorithm`);
    }
    const sp = p.session_persistence;
    if (sp && sp.type !== 'SOURCE_IP') {
      this.unsupported(
        `OVN provider does not support ${String(sp.type)} session persistence. Only SOURCE_IP type is supported.`,
      );
    }
  }

  member(m: MemberOptions): void {
    if (this.family !== 'ovn') return;
    if (m.monitor_address || m.monitor_port) {
      this.unsupported('OVN Load Balancer does not support different member monitor address or port.');
    }
  }

  healthmonitor(type: string): void {
    if (this.family !== 'ovn') return;
    if (!OVN_HM_TYPES.includes(type)) {
      this.unsupported(
        `OVN provider does not support ${type} health monitor type. Supported types: ${OVN_HM_TYPES.join(', ')}`,
      );
    }
  }

  l7policy(): void {
    if (this.family === 'ovn') {
      throw providerNotImplemented(this.name, 'This provider does not support creating l7policies.');
    }
  }

  l7rule(): void {
    if (this.family === 'ovn') {
      throw providerNotImplemented(this.name, 'This provider does not support creating l7rules.');
    }
  }

  failover(): void {
    if (this.family === 'ovn') this.unsupported('OVN provider does not support loadbalancer failover');
  }

  private unsupported(message: string): never {
    throw providerUnsupportedOption(this.name, message);
  }
}
