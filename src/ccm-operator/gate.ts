/**
 * Who runs the cloud loops, from OpenShift's handshake between the kube-controller-manager
 * operator and this one: KubeControllerManager `cluster` holds a `CloudControllerOwner`
 * condition that is True while kube-controller-manager runs the in-tree cloud loops and turns
 * False once every kube-controller-manager runs with `--cloud-provider=external`. Only then may a
 * CCM run; if it turns True again (a downgrade, or an admin handing the loops back), the CCM goes.
 *
 * Without the object (plain Kubernetes) or without the condition (OpenShift 4.16 and later, where
 * both operators dropped it: every platform is external), nothing holds the loops back.
 * `Unknown` counts as the in-tree side's: two controllers acting at once is the one outcome to avoid.
 */
import { Conditions, type KubeControllerManager } from './api/index.ts';

export type CloudLoops = { owner: 'ccm'; why: string } | { owner: 'in-tree'; why: string };

export function cloudLoopsOwner(kcm: KubeControllerManager | undefined): CloudLoops {
  if (!kcm) return { owner: 'ccm', why: 'there is no KubeControllerManager cluster' };
  const c = kcm.status?.conditions?.find((x) => x.type === Conditions.CloudControllerOwner);
  if (!c) return { owner: 'ccm', why: 'KubeControllerManager cluster has no CloudControllerOwner condition' };
  if (c.status === 'False') {
    return {
      owner: 'ccm',
      why: 'kube-controller-manager handed over the cloud loops (CloudControllerOwner=False)',
    };
  }
  return {
    owner: 'in-tree',
    why: `kube-controller-manager runs the cloud loops (KubeControllerManager cluster CloudControllerOwner=${c.status}${c.reason ? `, ${c.reason}` : ''})`,
  };
}
