/**
 * OCCM's GetLoadBalancerSourceRanges: `spec.loadBalancerSourceRanges` if any, else the
 * `service.beta.kubernetes.io/load-balancer-source-ranges` annotation (commas and blanks separate),
 * else allow-all for the Service's family. Every entry must be a CIDR, or the Service fails to sync.
 * The result is a set: entries are printed as Go prints a network (`10.0.0.1/8` → `10.0.0.0/8`) and
 * duplicates removed.
 */
import { formatCidr, parseCidr } from '../../lib/cidr.ts';
import type { IpFamily } from '../members.ts';

export type SourceRanges =
  { ok: true; ranges: string[]; set: boolean } | { ok: false; invalid: string[]; fromSpec: boolean };

export function sourceRanges(
  specRanges: readonly string[] | undefined,
  annotation: string | undefined,
  family: IpFamily | undefined,
): SourceRanges {
  const fromSpec = (specRanges ?? []).length > 0;
  let items: string[];
  let set = true;
  if (fromSpec) {
    items = [...specRanges!];
  } else {
    const text = (annotation ?? '').trim();
    if (text === '') {
      set = false;
      items = [family === 'IPv6' ? '::/0' : '0.0.0.0/0'];
    } else {
      items = text.split(/[\s,]+/).filter((s) => s !== '');
    }
  }
  // k8s.io/utils/net ParseCIDRSloppy trims nothing: " 10.0.0.0/8" in the spec list is invalid.
  const invalid = items.filter((i) => !parseCidr(i));
  if (invalid.length > 0) return { ok: false, invalid, fromSpec };
  const ranges = [...new Set(items.map((i) => formatCidr(parseCidr(i)!)))];
  return { ok: true, ranges, set };
}
