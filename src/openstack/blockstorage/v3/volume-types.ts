/** Cinder volume types (the public ones; admins see private ones too). https://docs.openstack.org/api-ref/block-storage/v3/#volume-types-types */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { blockStorageMicroversion } from './microversion.ts';

export interface VolumeType {
  id: string;
  name: string;
  description: string | null;
  is_public: boolean;
  /** Admins only (the backend selection keys). */
  extra_specs?: Record<string, string>;
  'os-volume-type-access:is_public'?: boolean;
}

/** `GET /types` (one page: Cinder answers the whole list). */
export async function listVolumeTypes(sc: ServiceClient, options: CallOptions = {}): Promise<VolumeType[]> {
  await blockStorageMicroversion(sc, options.signal);
  const res = await sc.request<{ volume_types: VolumeType[] }>({
    method: 'GET',
    path: 'types',
    label: 'volume_type_list',
    signal: options.signal,
  });
  return res.body.volume_types;
}

/** `GET /types/{id}`. */
export async function getVolumeType(
  sc: ServiceClient,
  id: string,
  options: CallOptions = {},
): Promise<VolumeType> {
  await blockStorageMicroversion(sc, options.signal);
  const res = await sc.request<{ volume_type: VolumeType }>({
    method: 'GET',
    path: `types/${encodeURIComponent(id)}`,
    label: 'volume_type_get',
    signal: options.signal,
  });
  return res.body.volume_type;
}
