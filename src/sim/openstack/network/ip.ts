/**
 * IPv4/IPv6 arithmetic for IPAM, held as bigint so both families share one code path
 * (an IPv6 /64 pool is 2^64 addresses; numbers would lose precision).
 */

export type IpVersion = 4 | 6;

export interface IpAddr {
  version: IpVersion;
  value: bigint;
}

export interface Cidr {
  version: IpVersion;
  /** Network address. */
  network: bigint;
  prefixlen: number;
  /** Last address of the block (the IPv4 broadcast address). */
  last: bigint;
}

const BITS: Record<IpVersion, number> = { 4: 32, 6: 128 };

export function bitsOf(version: IpVersion): number {
  return BITS[version];
}

function parseV4(s: string): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let v = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    v = (v << 8n) | BigInt(n);
  }
  return v;
}

function parseV6(s: string): bigint | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(s)) return undefined;
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    const items = part.split(':');
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      if (item.includes('.')) {
        // An embedded IPv4 tail (::ffff:10.0.0.1) fills the last two groups.
        if (i !== items.length - 1) return undefined;
        const v4 = parseV4(item);
        if (v4 === undefined) return undefined;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(item)) return undefined;
        out.push(parseInt(item, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  let all: number[];
  if (halves.length === 2) {
    const fill = 8 - head.length - tail.length;
    if (fill < 1) return undefined;
    all = [...head, ...new Array<number>(fill).fill(0), ...tail];
  } else {
    all = head;
  }
  if (all.length !== 8) return undefined;
  return all.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

export function parseIp(s: string): IpAddr | undefined {
  if (typeof s !== 'string') return undefined;
  if (s.includes(':')) {
    const v = parseV6(s);
    return v === undefined ? undefined : { version: 6, value: v };
  }
  const v = parseV4(s);
  return v === undefined ? undefined : { version: 4, value: v };
}

export function formatIp(version: IpVersion, value: bigint): string {
  if (version === 4) {
    return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join('.');
  }
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((value >> BigInt(i * 16)) & 0xffffn));
  // RFC 5952: compress the longest run (of two or more) of zero groups, the first on a tie.
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
  const hex = groups.map((g) => g.toString(16));
  if (bestLen < 2) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** Canonical text of an address, as Neutron stores it (lower case, compressed IPv6). */
export function canonicalIp(s: string): string | undefined {
  const ip = parseIp(s);
  return ip ? formatIp(ip.version, ip.value) : undefined;
}

function mask(version: IpVersion, prefixlen: number): bigint {
  const bits = BigInt(BITS[version]);
  const host = bits - BigInt(prefixlen);
  return ((1n << bits) - 1n) ^ ((1n << host) - 1n);
}

/** Parses `addr/len` (or a bare address as a host route); `strict` rejects host bits, as Neutron's subnet cidr validator does. */
export function parseCidr(s: string, strict = false): Cidr | undefined {
  if (typeof s !== 'string') return undefined;
  const [addr, len, ...rest] = s.split('/');
  if (rest.length > 0 || addr === undefined) return undefined;
  const ip = parseIp(addr);
  if (!ip) return undefined;
  const bits = BITS[ip.version];
  let prefixlen = bits;
  if (len !== undefined) {
    if (!/^\d{1,3}$/.test(len)) return undefined;
    prefixlen = Number(len);
    if (prefixlen > bits) return undefined;
  }
  const m = mask(ip.version, prefixlen);
  const network = ip.value & m;
  if (strict && network !== ip.value) return undefined;
  const last = network | (((1n << BigInt(bits)) - 1n) ^ m);
  return { version: ip.version, network, prefixlen, last };
}

export function formatCidr(c: Cidr): string {
  return `${formatIp(c.version, c.network)}/${c.prefixlen}`;
}

export function cidrContains(c: Cidr, ip: IpAddr): boolean {
  return c.version === ip.version && ip.value >= c.network && ip.value <= c.last;
}

export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  return a.version === b.version && a.network <= b.last && b.network <= a.last;
}

/** The SLAAC address of `mac` in a /64 (modified EUI-64: U/L bit flipped, ff:fe in the middle). */
export function eui64(prefix: bigint, mac: string): bigint {
  const b = mac.split(':').map((x) => parseInt(x, 16));
  const bytes = [(b[0] ?? 0) ^ 0x02, b[1] ?? 0, b[2] ?? 0, 0xff, 0xfe, b[3] ?? 0, b[4] ?? 0, b[5] ?? 0];
  const iid = bytes.reduce((acc, x) => (acc << 8n) | BigInt(x), 0n);
  return (prefix & ~((1n << 64n) - 1n)) | iid;
}

/** Normalises a MAC to Neutron's lower-case colon form; undefined when it is not a usable unicast MAC. */
export function normalizeMac(s: unknown): string | undefined {
  if (typeof s !== 'string') return undefined;
  const m =
    /^([0-9a-fA-F]{2})[:-]([0-9a-fA-F]{2})[:-]([0-9a-fA-F]{2})[:-]([0-9a-fA-F]{2})[:-]([0-9a-fA-F]{2})[:-]([0-9a-fA-F]{2})$/.exec(
      s,
    );
  if (!m) return undefined;
  const mac = m.slice(1).join(':').toLowerCase();
  if (mac === '00:00:00:00:00:00') return undefined;
  // Multicast MACs (low bit of the first octet) are rejected by neutron-lib's validator.
  if ((parseInt(m[1]!, 16) & 1) === 1) return undefined;
  return mac;
}
