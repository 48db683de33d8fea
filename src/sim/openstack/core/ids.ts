import { randomBytes, randomUUID } from 'node:crypto';

/** Neutron, Nova, Octavia, Glance and Cinder ids: dashed UUIDs. */
export const uuid = (): string => randomUUID();

/** Keystone ids (users, projects, credentials): 32 hex digits, no dashes. */
export const hexId = (): string => randomUUID().replaceAll('-', '');

export const requestId = (): string => `req-${randomUUID()}`;

/** A locally administered unicast MAC in Neutron's default base_mac range (fa:16:3e). */
export function macAddress(): string {
  const b = randomBytes(3);
  return `fa:16:3e:${[...b].map((x) => x.toString(16).padStart(2, '0')).join(':')}`;
}

/** Fernet-looking opaque token; only its shape matters to clients. */
export function opaqueToken(): string {
  return `gAAAAA${randomBytes(96).toString('base64url')}`;
}

/** OpenStack timestamps without fractional seconds, as Neutron and Nova print them. */
export function isoSeconds(date: Date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
