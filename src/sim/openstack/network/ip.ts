/**
 * IPv4/IPv6 arithmetic for IPAM, held as bigint so both families share one code path
 * (an IPv6 /64 pool is 2^64 addresses; numbers would lose precision). Addresses are read and
 * printed by src/lib/cidr.ts, the parser of every part; ranges, masks and EUI-64 are the emulator's.
 */
import * as lib from '../../../lib/cidr.ts';

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

/** Neutron reads addresses with netaddr's ZEROFILL: `010.0.0.1` is 10.0.0.1. */
const NEUTRON = { sloppy: true };

/** Python's reading: the family is the notation's (`::ffff:10.0.0.1` is IPv6), the value all its bits. */
export function parseIp(s: string): IpAddr | undefined {
  if (typeof s !== 'string') return undefined;
  const ip = lib.parseIp(s, NEUTRON);
  if (!ip) return undefined;
  const version = lib.ipVersion(s, NEUTRON) as IpVersion;
  const bytes = version === 4 ? ip.bytes.subarray(12) : ip.bytes;
  return { version, value: bytes.reduce((acc, b) => (acc << 8n) | BigInt(b), 0n) };
}

/** RFC 5952 for IPv6 (the longest run of two or more zero groups compressed, the first on a tie). */
export function formatIp(version: IpVersion, value: bigint): string {
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 16; i++) bytes[15 - i] = Number((value >> BigInt(i * 8)) & 0xffn);
  // An IPv4 address in Go's 16-byte form is mapped, which the library prints dotted.
  if (version === 4) bytes.set([0xff, 0xff], 10);
  return lib.formatIp({ family: version, bytes });
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
