/**
 * OpenStackClusterIdentity, infrastructure.cluster.x-k8s.io/v1alpha1, cluster-scoped (CAPO v0.14
 * `api/v1alpha1/openstackclusteridentity_types.go`): credentials kept in one namespace and lent
 * to the namespaces its selector allows, named by `identityRef.type: ClusterIdentity`.
 */
import { labelSelector } from './common.ts';
import { type Infer, object, string } from '../../kube/crd/schema.ts';

export const openStackClusterIdentitySpec = object(
  {
    secretRef: object(
      {
        name: string({ description: 'The Secret holding `clouds.yaml` (and optionally `cacert`).' }),
        namespace: string({ description: 'The namespace of the Secret.' }),
      },
      { required: ['name', 'namespace'] },
    ),
    namespaceSelector: labelSelector.describe('The namespaces that may use this identity; all when unset.'),
  },
  { required: ['secretRef'] },
);
export type OpenStackClusterIdentitySpec = Infer<typeof openStackClusterIdentitySpec>;
