/**
 * config.openshift.io/v1 Infrastructure `cluster`: where the cluster runs. The operator reads the
 * platform (`status.platformStatus.type` and its block), the cluster's name in the cloud, the
 * control-plane topology, and where the user's cloud config is (`spec.cloudConfig`). Every field
 * it does not read is kept as the real object has it.
 */
import { type Infer, object, openObject, string } from '../../kube/crd/schema.ts';

export const infrastructureSpec = openObject({
  cloudConfig: object({
    name: string({ description: 'The ConfigMap in openshift-config holding the cloud config.' }),
    key: string({ description: 'Its key holding the cloud config (default: config).' }),
  }).describe('The cloud provider configuration the user supplied (a ConfigMap reference).'),
  platformSpec: openObject({ type: string({ description: 'The platform type the user asked for.' }) }),
});
export type InfrastructureSpec = Infer<typeof infrastructureSpec>;

export const platformStatus = openObject({
  type: string({
    description:
      'The platform: AWS, Azure, GCP, OpenStack, VSphere, IBMCloud, PowerVS, Nutanix, None, External, …; its own block (e.g. openstack) sits beside it.',
  }),
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
