/**
 * config.openshift.io/v1 Infrastructure `cluster`: where the cluster runs. The operator reads the
 * platform (`status.platformStatus.type` and its block), the cluster's name in the cloud, the
 * control-plane topology, and where the user's cloud config is (`spec.cloudConfig`). Every field
 * it does not read is kept as the real object has it.
 */
import { array, type Infer, object, openObject, string } from '../../kube/crd/schema.ts';

export const infrastructureSpec = openObject({
  cloudConfig: object({
    name: string({ description: 'The ConfigMap in openshift-config holding the cloud config.' }),
    key: string({ description: 'Its key holding the cloud config (default: config).' }),
  }).describe('The cloud provider configuration the user supplied (a ConfigMap reference).'),
  platformSpec: openObject({ type: string({ description: 'The platform type the user asked for.' }) }),
});
export type InfrastructureSpec = Infer<typeof infrastructureSpec>;

/** The load balancers in front of the API and ingress VIPs (openshift/api OpenStackPlatformLoadBalancer). */
export const LOAD_BALANCER_TYPES = ['OpenShiftManagedDefault', 'UserManaged'] as const;

/**
 * `status.platformStatus.openstack` (openshift/api OpenStackPlatformStatus): the VIPs the Machine
 * API puts on its machines' ports as allowed address pairs, unless the load balancer is the user's.
 * Open: the fields nobody here reads stay as the installer wrote them.
 */
export const openStackPlatformStatus = openObject({
  apiServerInternalIP: string({ description: 'Deprecated: the first of apiServerInternalIPs.' }),
  apiServerInternalIPs: array(string(), {
    listType: 'set',
    description: 'The internal VIPs of the API server (one per IP family).',
  }),
  ingressIP: string({ description: 'Deprecated: the first of ingressIPs.' }),
  ingressIPs: array(string(), {
    listType: 'set',
    description: 'The VIPs of the default ingress controller (one per IP family).',
  }),
  loadBalancer: openObject({
    type: string({
      description:
        'OpenShiftManagedDefault (the cluster runs keepalived on the VIPs) or UserManaged (the user’s load balancer holds them).',
    }),
  }).describe('Who runs the load balancer of the VIPs.'),
});
export type OpenStackPlatformStatus = Infer<typeof openStackPlatformStatus>;

export const platformStatus = openObject({
  type: string({
    description:
      'The platform: AWS, Azure, GCP, OpenStack, VSphere, IBMCloud, PowerVS, Nutanix, None, External, …; its own block (e.g. openstack) sits beside it.',
  }),
  openstack: openStackPlatformStatus.describe('What an OpenStack cluster runs on (type OpenStack).'),
});
export type PlatformStatus = Infer<typeof platformStatus>;

export const infrastructureStatus = openObject({
  infrastructureName: string({ description: 'The cluster’s unique name in the cloud (--cluster-name).' }),
  platform: string({ description: 'Deprecated: use platformStatus.type.' }),
  platformStatus: platformStatus.describe('The platform and its settings.'),
  controlPlaneTopology: string({ description: 'HighlyAvailable, SingleReplica, External, …' }),
  infrastructureTopology: string({ description: 'HighlyAvailable or SingleReplica.' }),
  apiServerURL: string(),
  apiServerInternalURI: string(),
  etcdDiscoveryDomain: string(),
});
export type InfrastructureStatus = Infer<typeof infrastructureStatus>;
