/**
 * IP protocols as security group rules name them: the IANA names neutron-lib accepts for a rule's
 * `protocol`, with their numbers. Neutron treats a name and its number as the same protocol (a rule
 * for `6` duplicates one for `tcp`), and so must anything that compares rules: the emulator's
 * duplicate check and the controllers' rule diff (src/openstack/services/securitygroup).
 */

/** In neutron-lib's order (which its error message lists). */
export const IP_PROTOCOLS: Readonly<Record<string, number>> = {
  ah: 51,
  dccp: 33,
  egp: 8,
  esp: 50,
  gre: 47,
  hopopt: 0,
  icmp: 1,
  igmp: 2,
  ipip: 4,
  'ipv6-encap': 41,
  'ipv6-frag': 44,
  'ipv6-icmp': 58,
  icmpv6: 58,
  'ipv6-nonxt': 59,
  'ipv6-opts': 60,
  'ipv6-route': 43,
  ospf: 89,
  pgm: 113,
  rsvp: 46,
  sctp: 132,
  tcp: 6,
  udp: 17,
  udplite: 136,
  vrrp: 112,
};

/**
 * A rule's protocol as its number: a known name (any case) or an integer 0–255, as text or a
 * number. Undefined for "any" (null, '', 'any') and for a name that is not in the table.
 */
export function ipProtocolNumber(protocol: string | number | null | undefined): number | undefined {
  if (protocol === null || protocol === undefined) return undefined;
  const text = String(protocol).toLowerCase();
  const named = IP_PROTOCOLS[text];
  if (named !== undefined) return named;
  if (!/^\d{1,3}$/.test(text)) return undefined;
  const n = Number(text);
  return n <= 255 ? n : undefined;
}
