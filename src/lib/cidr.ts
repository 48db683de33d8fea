/**
 * IP addresses and CIDRs the way Go's net package reads them, because node address rules compare
 * them as OCCM does: `net.ParseIP` (dotted IPv4 without leading zeros, IPv6 with `::` and an
 * embedded IPv4 tail, no zone), `net.ParseCIDR` (host bits allowed, the network is kept), and
 * `bytes.Compare` over the 16-byte form for ordering. The one parser of every part and of the
 * emulators: the emulator's IPAM keeps its range arithmetic (src/sim/openstack/network/ip.ts) on
 * top of it.
 */

export interface ParseOptions {
  /**
   * Leading zeros in an IPv4 octet read as decimal (`010` is 10), as k8s.io/utils/net's
   * ParseIPSloppy (CAPO) and netaddr's ZEROFILL (Neutron) read them; Go's net.ParseIP refuses them.
   */
  sloppy?: boolean | undefined;
}

export interface Ip {
  /** 4 also for an IPv4-mapped IPv6 address, as Go's To4() sees it. */
  family: 4 | 6;
  /** Always 16 bytes (IPv4 as ::ffff:a.b.c.d), as Go holds them. */
  bytes: Uint8Array;
}

export interface Cidr {
  text: string;
  family: 4 | 6;
  /** The network address, 16 bytes. */
  network: Uint8Array;
  /** Prefix length within the family (0–32 or 0–128). */
  prefix: number;
}

const V4_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

function parseV4(text: string, opts: ParseOptions): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || (!opts.sloppy && p.length > 1 && p.startsWith('0'))) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out.push(n);
  }
  return out;
}

function parseV6(text: string, opts: ParseOptions): number[] | undefined {
  let head = text;
  let tail4: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.')) {
    const v4 = parseV4(text.slice(lastColon + 1), opts);
    if (!v4) return undefined;
    tail4 = v4;
    head = text.slice(0, lastColon + 1);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const double = head.indexOf('::');
  if (double !== head.lastIndexOf('::')) return undefined;
  const groups = (s: string): number[] | undefined => {
    if (s === '') return [];
    const out: number[] = [];
    for (const g of s.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
      const n = parseInt(g, 16);
      out.push(n >> 8, n & 0xff);
    }
    return out;
  };
  const want = 16 - tail4.length;
  let bytes: number[];
  if (double >= 0) {
    const left = groups(head.slice(0, double));
    const right = groups(head.slice(double + 2));
    if (!left || !right || left.length + right.length >= want) return undefined;
    bytes = [...left, ...new Array<number>(want - left.length - right.length).fill(0), ...right];
  } else {
    const all = groups(head);
    if (!all || all.length !== want) return undefined;
    bytes = all;
  }
  return [...bytes, ...tail4];
}

export function parseIp(text: string, opts: ParseOptions = {}): Ip | undefined {
  if (!text.includes(':')) {
    const v4 = parseV4(text, opts);
    return v4 ? { family: 4, bytes: Uint8Array.from([...V4_PREFIX, ...v4]) } : undefined;
  }
  const v6 = parseV6(text, opts);
  if (!v6) return undefined;
  const mapped = V4_PREFIX.every((b, i) => v6[i] === b);
  return { family: mapped ? 4 : 6, bytes: Uint8Array.from(v6) };
}

/**
 * The family an address is written in: 4 for dotted notation, 6 for colon notation (an
 * IPv4-mapped `::ffff:a.b.c.d` too), 0 when it is no address. What Node's `net.isIP` and
 * Python's `ip_address(s).version` (Neutron, Octavia) answer, where `parseIp` gives Go's To4() view.
 */
export function ipVersion(text: string, opts: ParseOptions = {}): 0 | 4 | 6 {
  if (parseIp(text, opts) === undefined) return 0;
  return text.includes(':') ? 6 : 4;
}

/** An IPv4 address in dotted notation. */
export function isIPv4(text: string, opts: ParseOptions = {}): boolean {
  return ipVersion(text, opts) === 4;
}

/** An IPv6 address in colon notation (an IPv4-mapped one included). */
export function isIPv6(text: string, opts: ParseOptions = {}): boolean {
  return ipVersion(text, opts) === 6;
}

/**
 * Go's `net.ParseIP(s).To4() == nil`, the test OCCM uses for "is IPv6": an address that does not
 * parse counts as IPv6 too, so `ipv6-support-disabled` drops it.
 */
export function isIPv6Like(text: string): boolean {
  return parseIp(text)?.family !== 4;
}

export function parseCidr(text: string, opts: ParseOptions = {}): Cidr | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const ip = parseIp(text.slice(0, slash), opts);
  const prefixText = text.slice(slash + 1);
  if (!ip || !/^\d{1,3}$/.test(prefixText)) return undefined;
  // Go decides the family by the text: "::ffff:10.0.0.0/104" is an IPv6 CIDR of 104 bits.
  const family = text.slice(0, slash).includes(':') ? 6 : 4;
  const prefix = Number(prefixText);
  if (prefix > (family === 4 ? 32 : 128)) return undefined;
  const bits = family === 4 ? prefix + 96 : prefix;
  const network = Uint8Array.from(ip.bytes, (b, i) => b & maskByte(bits, i));
  return { text, family, network, prefix };
}

function maskByte(bits: number, index: number): number {
  const left = bits - index * 8;
  if (left >= 8) return 0xff;
  if (left <= 0) return 0;
  return (0xff << (8 - left)) & 0xff;
}

/** Go's IPNet.Contains: an IPv4 network holds only IPv4 (or mapped) addresses, and the reverse. */
export function cidrContains(cidr: Cidr, ip: Ip): boolean {
  if (cidr.family === 4 && ip.family !== 4) return false;
  if (cidr.family === 6 && ip.family === 4 && cidr.prefix < 96) {
    // A Go IPv6 network never contains an address whose To4() succeeds.
    return false;
  }
  const bits = cidr.family === 4 ? cidr.prefix + 96 : cidr.prefix;
  return ip.bytes.every((b, i) => (b & maskByte(bits, i)) === cidr.network[i]);
}

/** bytes.Compare over Go's 16-byte form. */
export function compareIps(a: Ip, b: Ip): number {
  for (let i = 0; i < 16; i++) {
    const d = a.bytes[i]! - b.bytes[i]!;
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

/** Go's IP.String(): dotted IPv4 (also for mapped addresses), else RFC 5952 IPv6 (longest zero run ≥ 2 as `::`). */
export function formatIp(ip: Ip): string {
  if (ip.family === 4) return Array.from(ip.bytes.subarray(12)).join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((ip.bytes[i]! << 8) | ip.bytes[i + 1]!);
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (gs: number[]) => gs.map((g) => g.toString(16)).join(':');
  if (bestLen < 2) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLen))}`;
}

/** Go's IPNet.String() of a parsed CIDR: the network address and the prefix, e.g. `10.0.0.0/8`. */
export function formatCidr(cidr: Cidr): string {
  const network: Ip = { family: cidr.family, bytes: cidr.network };
  const address = cidr.family === 6 && isMapped(cidr.network) ? ipv6Text(cidr.network) : formatIp(network);
  return `${address}/${cidr.prefix}`;
}

function isMapped(bytes: Uint8Array): boolean {
  return V4_PREFIX.every((b, i) => bytes[i] === b);
}

/** An IPv6 network that happens to be IPv4-mapped still prints in IPv6 form, as Go does for a 16-byte mask. */
function ipv6Text(bytes: Uint8Array): string {
  return `::ffff:${Array.from(bytes.subarray(12)).join('.')}`;
}

/** The absolute prefix length in the 16-byte form (an IPv4 /8 is 104 bits). */
function absoluteBits(cidr: Cidr): number {
  return cidr.family === 4 ? cidr.prefix + 96 : cidr.prefix;
}

/** Whether `inner` lies wholly inside `outer` (same family, longer or equal prefix, same leading bits). */
export function cidrContainsCidr(outer: Cidr, inner: Cidr): boolean {
  if (outer.family !== inner.family || inner.prefix < outer.prefix) return false;
  return cidrContains(outer, { family: inner.family, bytes: inner.network });
}

/**
 * The networks of `cidr` left when every network of `excluded` is taken out, in address order:
 * what netaddr's `cidr_exclude` gives for one exclusion, applied for all of them at once (a
 * Kubernetes ipBlock's `except`). An exclusion outside `cidr` takes nothing; one holding it takes all.
 */
export function excludeCidrs(cidr: Cidr, excluded: readonly Cidr[]): Cidr[] {
  let pieces: Cidr[] = [cidr];
  for (const ex of excluded) {
    const next: Cidr[] = [];
    for (const piece of pieces) {
      if (cidrContainsCidr(ex, piece)) continue;
      if (!cidrContainsCidr(piece, ex)) {
        next.push(piece);
        continue;
      }
      // The siblings of ex's ancestors below piece cover piece minus ex, one per bit of difference.
      const from = absoluteBits(piece);
      const to = absoluteBits(ex);
      for (let bit = from; bit < to; bit++) {
        const network = Uint8Array.from(ex.network, (b, i) => b & maskByte(bit + 1, i));
        network[bit >> 3]! ^= 1 << (7 - (bit & 7));
        const prefix = piece.family === 4 ? bit + 1 - 96 : bit + 1;
        const made: Cidr = { text: '', family: piece.family, network, prefix };
        next.push({ ...made, text: formatCidr(made) });
      }
    }
    pieces = next;
  }
  return pieces.sort(
    (a, b) =>
      compareIps({ family: a.family, bytes: a.network }, { family: b.family, bytes: b.network }) ||
      a.prefix - b.prefix,
  );
}
