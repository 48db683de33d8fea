/** The group and version of Kuryr's CRDs (KURYR `kubernetes_crds/kuryr_crds/*.yaml`). */
export const KURYR_GROUP = 'openstack.org';
export const KURYR_VERSION = 'v1';
export const KURYR_API_VERSION = `${KURYR_GROUP}/${KURYR_VERSION}`;
