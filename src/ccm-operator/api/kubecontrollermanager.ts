/**
 * operator.openshift.io/v1 KubeControllerManager `cluster`: the kube-controller-manager operator's
 * object. Its `CloudControllerOwner` condition says whether kube-controller-manager still runs the
 * in-tree cloud loops (True) or has handed them over (False); the operator reads nothing else.
 */
import { type Infer, openObject, string } from '../../kube/crd/schema.ts';
import { openshiftConditions } from './common.ts';

export const kubeControllerManagerSpec = openObject({
  managementState: string({ description: 'Managed, Unmanaged, Force or Removed.' }),
});
export type KubeControllerManagerSpec = Infer<typeof kubeControllerManagerSpec>;

export const kubeControllerManagerStatus = openObject({ conditions: openshiftConditions });
export type KubeControllerManagerStatus = Infer<typeof kubeControllerManagerStatus>;
