/**
 * Failure domains from Nova's availability zones (CAPO's reconcileFailureDomains): one per zone the
 * project sees, `controlPlane: true` unless `controlPlaneAvailabilityZones` leaves it out, or, when
 * that list is empty, `controlPlaneOmitAvailabilityZone` marks none (the Nova scheduler places the
 * control plane). Cluster API spreads control-plane machines over the domains marked for them.
 */
import type { ComputeAvailabilityZone } from '../../openstack/compute/v2/availability-zones.ts';
import type { OpenStackClusterSpec, OpenStackClusterStatus } from '../api/index.ts';
import type { ClusterApi } from './api.ts';

export type FailureDomains = NonNullable<OpenStackClusterStatus['failureDomains']>;

export function failureDomainsFrom(
  zones: readonly ComputeAvailabilityZone[],
  spec: Pick<OpenStackClusterSpec, 'controlPlaneAvailabilityZones' | 'controlPlaneOmitAvailabilityZone'>,
): FailureDomains {
  const allowed = spec.controlPlaneAvailabilityZones ?? [];
  const byDefault = spec.controlPlaneOmitAvailabilityZone !== true;
  const out: FailureDomains = {};
  for (const z of [...zones].sort((a, b) => a.zoneName.localeCompare(b.zoneName))) {
    // `internal` holds Nova's own services; it is never a place for servers.
    if (z.zoneName === 'internal' || !z.zoneState.available) continue;
    out[z.zoneName] = { controlPlane: allowed.length === 0 ? byDefault : allowed.includes(z.zoneName) };
  }
  return out;
}

export async function reconcileFailureDomains(
  api: ClusterApi,
  spec: OpenStackClusterSpec,
  signal: AbortSignal,
): Promise<FailureDomains> {
  return failureDomainsFrom(await api.compute.availabilityZones.list({ signal }), spec);
}
