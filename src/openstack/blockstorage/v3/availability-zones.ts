/** Cinder availability zones. https://docs.openstack.org/api-ref/block-storage/v3/#availability-zones-os-availability-zone */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { blockStorageMicroversion } from './microversion.ts';

export interface VolumeAvailabilityZone {
  zoneName: string;
  zoneState: { available: boolean };
}

/** `GET /os-availability-zone`. */
export async function listVolumeAvailabilityZones(
  sc: ServiceClient,
  options: CallOptions = {},
): Promise<VolumeAvailabilityZone[]> {
  await blockStorageMicroversion(sc, options.signal);
  const res = await sc.request<{ availabilityZoneInfo: VolumeAvailabilityZone[] }>({
    method: 'GET',
    path: 'os-availability-zone',
    label: 'volume_availability_zone_list',
    signal: options.signal,
  });
  return res.body.availabilityZoneInfo;
}
