/**
 * The kuryr API: the four CRDs of openstack.org/v1 (KuryrPort, KuryrNetwork, KuryrLoadBalancer,
 * KuryrNetworkPolicy), the os-vif VIF they carry, and the names (finalizers, labels, tags) kuryr
 * puts on Kubernetes and OpenStack objects. See docs/kuryr.md.
 */
export { KURYR_API_VERSION, KURYR_GROUP, KURYR_VERSION } from './common.ts';
export {
  ALL_KINDS,
  kuryrKinds,
  kuryrLoadBalancer,
  kuryrNetwork,
  kuryrNetworkPolicy,
  kuryrPort,
  type KuryrLoadBalancer,
  type KuryrNetwork,
  type KuryrNetworkPolicy,
  type KuryrPort,
} from './kinds.ts';
export * from './names.ts';
export * from './vif.ts';
export { CRD_DIR, crdFiles } from './files.ts';
