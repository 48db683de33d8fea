/** Nova availability zones as a project sees them. https://docs.openstack.org/api-ref/compute/#availability-zones-os-availability-zone */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { computeMicroversion } from './microversion.ts';

export interface ComputeAvailabilityZone {
  zoneName: string;
  zoneState: { available: boolean };
  /** Null for non-admins (and in the plain list); hosts and their services in `detail` for admins. */
  hosts: Record<string, unknown> | null;
}

/** `GET /os-availability-zone` (`/detail` for admins, with hosts; the `internal` zone of control services appears there). */
export async function listComputeAvailabilityZones(
  sc: ServiceClient,
  options: CallOptions & { detail?: boolean | undefined } = {},
): Promise<ComputeAvailabilityZone[]> {
  await computeMicroversion(sc, options.signal);
  const res = await sc.request<{ availabilityZoneInfo: ComputeAvailabilityZone[] }>({
    method: 'GET',
    path: options.detail ? 'os-availability-zone/detail' : 'os-availability-zone',
    label: 'compute_availability_zone_list',
    signal: options.signal,
  });
  return res.body.availabilityZoneInfo;
}
