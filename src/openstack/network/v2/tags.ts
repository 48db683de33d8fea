/**
 * Neutron tags, on any resource with the `standard-attr-tag` extension: add one, replace all,
 * remove one or all, check one. Tags are filters too (see `TagFilters`).
 * https://docs.openstack.org/api-ref/network/v2/#tag-extension-tags
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';

/** The collections whose objects carry tags (the paths below `/v2.0`). */
export type TaggableResource =
  | 'networks'
  | 'subnets'
  | 'ports'
  | 'routers'
  | 'floatingips'
  | 'security-groups'
  | 'trunks'
  | 'subnetpools'
  | 'policies'
  | 'address-scopes'
  | 'network_segment_ranges';

/** The metrics name of each collection, as its resource module uses. */
const LABEL: Record<TaggableResource, string> = {
  networks: 'network',
  subnets: 'subnet',
  ports: 'port',
  routers: 'router',
  floatingips: 'floating_ip',
  'security-groups': 'security_group',
  trunks: 'trunk',
  subnetpools: 'subnetpool',
  policies: 'qos_policy',
  'address-scopes': 'address_scope',
  network_segment_ranges: 'network_segment_range',
};

const base = (resource: TaggableResource, id: string) => `${resource}/${encodeURIComponent(id)}/tags`;
const one = (resource: TaggableResource, id: string, tag: string) =>
  `${base(resource, id)}/${encodeURIComponent(tag)}`;

/** `PUT …/tags/{tag}`: adds one tag, keeping the others; adding a tag already there is no error. */
export async function addTag(
  sc: ServiceClient,
  resource: TaggableResource,
  id: string,
  tag: string,
  options: CallOptions = {},
): Promise<void> {
  await sc.request({
    method: 'PUT',
    path: one(resource, id, tag),
    label: `${LABEL[resource]}_tag_add`,
    signal: options.signal,
    expect: [201, 204],
    responseType: 'bytes',
  });
}

/** `PUT …/tags` with the whole list: the object ends with exactly these tags. */
export async function replaceTags(
  sc: ServiceClient,
  resource: TaggableResource,
  id: string,
  tags: readonly string[],
  options: CallOptions = {},
): Promise<string[]> {
  const res = await sc.request<{ tags: string[] }>({
    method: 'PUT',
    path: base(resource, id),
    body: { tags },
    label: `${LABEL[resource]}_tag_replace`,
    signal: options.signal,
  });
  return res.body.tags;
}

/** `DELETE …/tags/{tag}`; a tag the object does not have is a 404. */
export async function removeTag(
  sc: ServiceClient,
  resource: TaggableResource,
  id: string,
  tag: string,
  options: CallOptions = {},
): Promise<void> {
  await sc.request({
    method: 'DELETE',
    path: one(resource, id, tag),
    label: `${LABEL[resource]}_tag_delete`,
    signal: options.signal,
    expect: [204],
  });
}

/** `DELETE …/tags`: removes every tag. */
export async function removeAllTags(
  sc: ServiceClient,
  resource: TaggableResource,
  id: string,
  options: CallOptions = {},
): Promise<void> {
  await sc.request({
    method: 'DELETE',
    path: base(resource, id),
    label: `${LABEL[resource]}_tag_delete_all`,
    signal: options.signal,
    expect: [204],
  });
}

/** `GET …/tags`. */
export async function listTags(
  sc: ServiceClient,
  resource: TaggableResource,
  id: string,
  options: CallOptions = {},
): Promise<string[]> {
  const res = await sc.request<{ tags: string[] }>({
    method: 'GET',
    path: base(resource, id),
    label: `${LABEL[resource]}_tag_list`,
    signal: options.signal,
  });
  return res.body.tags;
}

/** `GET …/tags/{tag}`: true when the object has the tag (204), false when not (404). */
export async function hasTag(
  sc: ServiceClient,
  resource: TaggableResource,
  id: string,
  tag: string,
  options: CallOptions = {},
): Promise<boolean> {
  const res = await sc.request({
    method: 'GET',
    path: one(resource, id, tag),
    label: `${LABEL[resource]}_tag_get`,
    signal: options.signal,
    expect: [204, 404],
    responseType: 'bytes',
  });
  return res.status === 204;
}
