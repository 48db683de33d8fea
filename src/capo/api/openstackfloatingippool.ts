/**
 * OpenStackFloatingIPPool, infrastructure.cluster.x-k8s.io/v1alpha1 (CAPO v0.14
 * `api/v1alpha1/openstackfloatingippool_types.go`). Served so that manifests using it are
 * accepted; shiftstack has no controller for it and reports it as not supported.
 */
import { conditions, identityRef, networkParam } from './common.ts';
import { array, enumOf, type Infer, integer, object, string } from '../../kube/crd/schema.ts';

export const RECLAIM_POLICIES = ['Retain', 'Delete'] as const;

export const openStackFloatingIPPoolSpec = object(
  {
    preAllocatedFloatingIPs: array(string(), {
      description: 'Existing floating IPs, used first and never deleted.',
    }),
    maxIPs: integer({ description: 'The most floating IPs the pool allocates; no limit when unset.' }),
    identityRef: identityRef.describe('The OpenStack credentials.'),
    floatingIPNetwork: networkParam.describe('The external network; the only one there is when unset.'),
    reclaimPolicy: enumOf(RECLAIM_POLICIES, { description: 'What happens to a released floating IP.' }),
  },
  { required: ['identityRef'] },
);
export type OpenStackFloatingIPPoolSpec = Infer<typeof openStackFloatingIPPoolSpec>;

export const openStackFloatingIPPoolStatus = object({
  claimedIPs: array(string()).default([]),
  availableIPs: array(string()).default([]),
  failedIPs: array(string(), { description: 'Floating IPs that could not be allocated.' }),
  floatingIPNetwork: object(
    { name: string(), id: string(), tags: array(string()) },
    { required: ['name', 'id'] },
  ),
  conditions,
});
export type OpenStackFloatingIPPoolStatus = Infer<typeof openStackFloatingIPPoolStatus>;
