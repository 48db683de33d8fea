/**
 * Server tags (microversion 2.26): unlike metadata, they are filters of the server list (`tags`,
 * `tags-any`, …). https://docs.openstack.org/api-ref/compute/#server-tags-servers-tags
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { objectTags, type TaggedObject } from '../../core/tags.ts';
import { computeMicroversion, requireMicroversion } from './microversion.ts';

const tagged = (serverId: string): TaggedObject => ({ collection: 'servers', id: serverId, label: 'server' });

async function gate(sc: ServiceClient, signal: AbortSignal | undefined): Promise<void> {
  await requireMicroversion(sc, await computeMicroversion(sc, signal), '2.26', 'server tags', signal);
}

/** `GET …/tags`. */
export async function listServerTags(
  sc: ServiceClient,
  serverId: string,
  options: CallOptions = {},
): Promise<string[]> {
  await gate(sc, options.signal);
  return objectTags.list(sc, tagged(serverId), options);
}

/** `PUT …/tags`: the server ends with exactly these tags (at most 50). */
export async function replaceServerTags(
  sc: ServiceClient,
  serverId: string,
  tags: readonly string[],
  options: CallOptions = {},
): Promise<string[]> {
  await gate(sc, options.signal);
  return objectTags.replace(sc, tagged(serverId), tags, options);
}

/** `PUT …/tags/{tag}` → 201 (added) or 204 (already there). */
export async function addServerTag(
  sc: ServiceClient,
  serverId: string,
  tag: string,
  options: CallOptions = {},
): Promise<void> {
  await gate(sc, options.signal);
  await objectTags.add(sc, tagged(serverId), tag, options);
}

/** `DELETE …/tags/{tag}`; a tag the server does not have is a 404. */
export async function removeServerTag(
  sc: ServiceClient,
  serverId: string,
  tag: string,
  options: CallOptions = {},
): Promise<void> {
  await gate(sc, options.signal);
  await objectTags.remove(sc, tagged(serverId), tag, options);
}

/** `DELETE …/tags`: removes them all. */
export async function removeAllServerTags(
  sc: ServiceClient,
  serverId: string,
  options: CallOptions = {},
): Promise<void> {
  await gate(sc, options.signal);
  await objectTags.removeAll(sc, tagged(serverId), options);
}

/** `GET …/tags/{tag}`: true (204) or false (404). */
export async function serverHasTag(
  sc: ServiceClient,
  serverId: string,
  tag: string,
  options: CallOptions = {},
): Promise<boolean> {
  await gate(sc, options.signal);
  return objectTags.has(sc, tagged(serverId), tag, options);
}
