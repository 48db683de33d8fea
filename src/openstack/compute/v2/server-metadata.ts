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
export async function replaceServerMetadata(
  sc: ServiceClient,
  serverId: string,
  metadata: Metadata,
  options: CallOptions = {},
): Promise<Metadata> {
  await computeMicroversion(sc, options.signal);
  const res = await sc.request<{ metadata: Metadata }>({
    method: 'PUT',
    path: base(serverId),
    body: { metadata },
    label: 'server_metadata_replace',
    signal: options.signal,
  });
  return res.body.metadata;
}

/** `POST …/metadata`: sets these items, keeping the others; returns the whole metadata. */
export async function updateServerMetadata(
  sc: ServiceClient,
  serverId: string,
  metadata: Metadata,
  options: CallOptions = {},
): Promise<Metadata> {
  await computeMicroversion(sc, options.signal);
  const res = await sc.request<{ metadata: Metadata }>({
    method: 'POST',
    path: base(serverId),
    body: { metadata },
    label: 'server_metadata_update',
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
