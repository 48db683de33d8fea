/**
 * Neutron tags, on any resource with the `standard-attr-tag` extension: add one, replace all,
 * remove one or all, check one. Tags are filters too (see `TagFilters`).
 * https://docs.openstack.org/api-ref/network/v2/#tag-extension-tags
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { objectTags, type TaggedObject } from '../../core/tags.ts';

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

const tagged = (resource: TaggableResource, id: string): TaggedObject => ({
  collection: resource,
  id,
  label: LABEL[resource],
});

/** `PUT …/tags/{tag}`: adds one tag, keeping the others; adding a tag already there is no error. */
export async function addTag(
  sc: ServiceClient,
  resource: TaggableResource,
  id: string,
  tag: string,
  options: CallOptions = {},
): Promise<void> {
  await objectTags.add(sc, tagged(resource, id), tag, options);
}

/** `PUT …/tags` with the whole list: the object ends with exactly these tags. */
export async function replaceTags(
  sc: ServiceClient,
  resource: TaggableResource,
  id: string,
  tags: readonly string[],
  options: CallOptions = {},
): Promise<string[]> {
  return objectTags.replace(sc, tagged(resource, id), tags, options);
}

/** `DELETE …/tags/{tag}`; a tag the object does not have is a 404. */
export async function removeTag(
  sc: ServiceClient,
  resource: TaggableResource,
  id: string,
  tag: string,
  options: CallOptions = {},
): Promise<void> {
  await objectTags.remove(sc, tagged(resource, id), tag, options);
}

/** `DELETE …/tags`: removes every tag. */
export async function removeAllTags(
  sc: ServiceClient,
  resource: TaggableResource,
  id: string,
  options: CallOptions = {},
): Promise<void> {
  await objectTags.removeAll(sc, tagged(resource, id), options);
}

/** `GET …/tags`. */
export async function listTags(
  sc: ServiceClient,
  resource: TaggableResource,
  id: string,
  options: CallOptions = {},
): Promise<string[]> {
  return objectTags.list(sc, tagged(resource, id), options);
}

/** `GET …/tags/{tag}`: true when the object has the tag (204), false when not (404). */
export async function hasTag(
  sc: ServiceClient,
  resource: TaggableResource,
  id: string,
  tag: string,
  options: CallOptions = {},
): Promise<boolean> {
  return objectTags.has(sc, tagged(resource, id), tag, options);
}
