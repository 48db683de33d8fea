/**
 * `[Networking]` (OCCM's NetworkingOpts): which node addresses are external, which internal, the
 * IPv6 switch and the CIDR sort order. `public-network-name` and `internal-network-name` repeat.
 */
import { parseCidr } from '../../lib/cidr.ts';
import type { SectionReader } from './section-reader.ts';
import type { NetworkingOptions } from './types.ts';

const KEYS = ['ipv6-support-disabled', 'public-network-name', 'internal-network-name', 'address-sort-order'];
const MULTI = ['public-network-name', 'internal-network-name'];

export function readNetworkingSection(r: SectionReader): NetworkingOptions {
  r.checkKeys(KEYS, { multi: MULTI });
  const sortOrder = r.text('address-sort-order');
  const addressSortOrder: string[] = [];
  // util.SplitTrim: commas and blanks both separate; items that are not CIDRs are warned and skipped.
  for (const item of (sortOrder ?? '').split(/[\s,]+/).filter((s) => s !== '')) {
    if (parseCidr(item)) addressSortOrder.push(item);
    else
      r.warn(
        r.entry('address-sort-order')!,
        `"${item}" is not a CIDR and is skipped (write e.g. 10.0.0.0/8)`,
      );
  }
  const publicNetworkNames = r.all('public-network-name');
  const internalNetworkNames = r.all('internal-network-name');
  for (const name of publicNetworkNames.filter((n) => internalNetworkNames.includes(n))) {
    r.warn(
      r.entry('public-network-name')!,
      `network "${name}" is listed as both public and internal; its addresses are ExternalIP only`,
    );
  }
  return {
    ipv6SupportDisabled: r.bool('ipv6-support-disabled', false),
    publicNetworkNames,
    internalNetworkNames,
    addressSortOrder,
  };
}
