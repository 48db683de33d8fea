/**
 * Server tags (microversion 2.26): unlike metadata, they are filters of the server list (`tags`,
 * `tags-any`, …). https://docs.openstack.org/api-ref/compute/#server-tags-servers-tags
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { computeMicroversion, requireMicroversion } from './microversion.ts';

const base = (serverId: string) => `servers/${encodeURIComponent(serverId)}/tags`;
const one = (serverId: string, tag: string) => `${base(serverId)}/${encodeURIComponent(tag)}`;

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
  const res = await sc.request<{ tags: string[] }>({
    method: 'GET',
    path: base(serverId),
    label: 'server_tag_list',
    signal: options.signal,
  });
  return res.body.tags;
}

/** `PUT …/tags`: the server ends with exactly these tags (at most 50). */
export async function replaceServerTags(
  sc: ServiceClient,
  serverId: string,
  tags: readonly string[],
  options: CallOptions = {},
): Promise<string[]> {
  await gate(sc, options.signal);
  const res = await sc.request<{ tags: string[] }>({
    method: 'PUT',
    path: base(serverId),
    body: { tags },
    label: 'server_tag_replace',
    signal: options.signal,
  });
  return res.body.tags;
}

/** `PUT …/tags/{tag}` → 201 (added) or 204 (already there). */
export async function addServerTag(
  sc: ServiceClient,
  serverId: string,
  tag: string,
  options: CallOptions = {},
): Promise<void> {
  await gate(sc, options.signal);
  await sc.request({
    method: 'PUT',
    path: one(serverId, tag),
    label: 'server_tag_add',
    signal: options.signal,
    expect: [201, 204],
    responseType: 'bytes',
  });
}

/** `DELETE …/tags/{tag}`; a tag the server does not have is a 404. */
export async function removeServerTag(
  sc: ServiceClient,
  serverId: string,
  tag: string,
  options: CallOptions = {},
): Promise<void> {
  await gate(sc, options.signal);
  await sc.request({
    method: 'DELETE',
    path: one(serverId, tag),
    label: 'server_tag_delete',
    signal: options.signal,
    expect: [204],
  });
}

/** `DELETE …/tags`: removes them all. */
export async function removeAllServerTags(
  sc: ServiceClient,
  serverId: string,
  options: CallOptions = {},
): Promise<void> {
  await gate(sc, options.signal);
  await sc.request({
    method: 'DELETE',
    path: base(serverId),
    label: 'server_tag_delete_all',
    signal: options.signal,
    expect: [204],
  });
}

/** `GET …/tags/{tag}`: true (204) or false (404). */
export async function serverHasTag(
  sc: ServiceClient,
  serverId: string,
  tag: string,
  options: CallOptions = {},
): Promise<boolean> {
  await gate(sc, options.signal);
  const res = await sc.request({
    method: 'GET',
    path: one(serverId, tag),
    label: 'server_tag_get',
    signal: options.signal,
    expect: [204, 404],
    responseType: 'bytes',
  });
  return res.status === 204;
}
