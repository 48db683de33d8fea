/**
 * Server metadata: string keys and values (255 characters each) kept by Nova, readable in the guest
 * through the metadata service. https://docs.openstack.org/api-ref/compute/#server-metadata-servers-metadata
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { computeMicroversion } from './microversion.ts';

export type Metadata = Record<string, string>;

const base = (serverId: string) => `servers/${encodeURIComponent(serverId)}/metadata`;

/** `GET …/metadata`. */
export async function getServerMetadata(
  sc: ServiceClient,
  serverId: string,
  options: CallOptions = {},
): Promise<Metadata> {
  await computeMicroversion(sc, options.signal);
  const res = await sc.request<{ metadata: Metadata }>({
    method: 'GET',
    path: base(serverId),
    label: 'server_metadata_list',
    signal: options.signal,
  });
  return res.body.metadata;
}

/** `PUT …/metadata`: the server ends with exactly these items; returns them. */
export function replaceServerMetadata(
  sc: ServiceClient,
  serverId: string,
  metadata: Metadata,
  options: CallOptions = {},
): Promise<Metadata> {
  return writeMetadata(sc, serverId, 'PUT', 'server_metadata_replace', metadata, options);
}

/** `POST …/metadata`: sets these items, keeping the others; returns the whole metadata. */
export function updateServerMetadata(
  sc: ServiceClient,
  serverId: string,
  metadata: Metadata,
  options: CallOptions = {},
): Promise<Metadata> {
  return writeMetadata(sc, serverId, 'POST', 'server_metadata_update', metadata, options);
}

/** Replace and update are one call but for the method: PUT drops the items not given, POST keeps them. */
async function writeMetadata(
  sc: ServiceClient,
  serverId: string,
  method: 'PUT' | 'POST',
  label: string,
  metadata: Metadata,
  options: CallOptions,
): Promise<Metadata> {
  await computeMicroversion(sc, options.signal);
  const res = await sc.request<{ metadata: Metadata }>({
    method,
    path: base(serverId),
    body: { metadata },
    label,
    signal: options.signal,
  });
  return res.body.metadata;
}

/** `DELETE …/metadata/{key}`; a key the server does not have is a 404. */
export async function deleteServerMetadataItem(
  sc: ServiceClient,
  serverId: string,
  key: string,
  options: CallOptions = {},
): Promise<void> {
  await computeMicroversion(sc, options.signal);
  await sc.request({
    method: 'DELETE',
    path: `${base(serverId)}/${encodeURIComponent(key)}`,
    label: 'server_metadata_delete',
    signal: options.signal,
    expect: [204],
  });
}
