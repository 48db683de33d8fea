/**
 * The typed OpenStack client. Start with `resolveCloudConfig` (config/) and
 * `OpenStackClient.fromConfig`, then `client.compute`, `client.network`, `client.loadBalancer`,
 * `client.image`, `client.blockStorage` (or, with a ServiceClient, the functions of the namespaces
 * exported here: `network.ports.get(sc, id)`). Resource modules build on `ServiceClient`, `Pager` and `waitFor`.
 */
export { OpenStackClient, type OpenStackClientOptions } from './client.ts';
export * from './core/index.ts';
export { resolveCloudConfig, type ResolveOptions } from './config/resolve.ts';
export { processContext } from './config/context.ts';
export type {
  AuthType,
  CloudConfig,
  ConfigSource,
  EndpointInterface,
  LoadContext,
  TlsConfig,
} from './config/types.ts';
export * as identity from './identity/v3/index.ts';
export { identityV3, type IdentityV3 } from './identity/v3/index.ts';
export * as compute from './compute/v2/index.ts';
export { computeV2, type ComputeV2 } from './compute/v2/index.ts';
export * as network from './network/v2/index.ts';
export { networkV2, type NetworkV2 } from './network/v2/index.ts';
export * as loadBalancer from './loadbalancer/v2/index.ts';
export { loadBalancerV2, type LoadBalancerV2 } from './loadbalancer/v2/index.ts';
export * as image from './image/v2/index.ts';
export { imageV2, type ImageV2 } from './image/v2/index.ts';
export * as blockStorage from './blockstorage/v3/index.ts';
export { blockStorageV3, type BlockStorageV3 } from './blockstorage/v3/index.ts';
