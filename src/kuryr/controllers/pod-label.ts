/**
 * The `pod-label` controller (upstream's PodLabelHandler, `pod_label` handler): a wired pod's ports
 * carry the groups the security-groups driver gives it (with the `policy` driver, those of the
 * network policies selecting it). Woken when the pod's labels change, when its KuryrPort gets or
 * changes its VIFs, and when a KuryrNetworkPolicy of its namespace changes what it selects, gets
 * its group or is being deleted — so a policy's change (de)selects pods here too.
 *
 * Per reconcile: the pod and its KuryrPort from the cache (a pod not wired yet is left to the port
 * code, which asks the same driver), the groups from the driver (a policy without its group yet
 * is waited for: its status wakes us), then each VIF's port read from Neutron and updated only
 * when its groups differ, on the revision read, so a concurrent writer is never overwritten
 * blindly. A port already gone is nobody's to fix.
 *
 * Upstream remembers the labels it acted on in a pod annotation; we compare with the port itself,
 * which is the truth a restart or a lost write cannot make stale.
 */
import type { V1Pod } from '@kubernetes/client-node';
import {
  fieldsChanged,
  isDeleting,
  kinds,
  labelChanged,
  NAMESPACE_INDEX,
  objectKey,
  type Manager,
  type Request,
  type Result,
} from '../../kube/index.ts';
import { ignoreNotFound } from '../../openstack/core/errors.ts';
import { kuryrKinds, readVif, type KuryrNetworkPolicy, type KuryrPort } from '../api/index.ts';
import type { KuryrContext } from '../context.ts';
import { isPending } from '../drivers.ts';
import { usePolicySecurityGroups } from '../policy/driver.ts';
import { sameGroups } from '../policy/pod-groups.ts';
import { onPodNetwork } from '../policy/world.ts';

export const POD_LABEL_CONTROLLER = 'pod-label';

export function registerPodLabelController(mgr: Manager, ctx: KuryrContext): void {
  usePolicySecurityGroups(mgr.client, ctx);
  const pods = mgr.informers.informerFor(kinds.Pod);
  const r = new PodLabelReconciler(mgr, ctx);
  mgr
    .controller(POD_LABEL_CONTROLLER)
    .for(kinds.Pod, { predicates: [labelChanged()] })
    .watches(kuryrKinds.KuryrPort, (kp) => [objectKey(kp)], {
      predicates: [fieldsChanged<KuryrPort>(portIds)],
    })
    .watches(
      kuryrKinds.KuryrNetworkPolicy,
      (knp) => pods.byIndex(NAMESPACE_INDEX, knp.metadata?.namespace ?? '').map((p) => objectKey(p)),
      { predicates: [fieldsChanged<KuryrNetworkPolicy>(selection)] },
    )
    .complete(r);
}

/** The Neutron ports of a KuryrPort's VIFs (a primitive that does not read has none). */
export function portIds(kp: KuryrPort): string[] {
  const ids: string[] = [];
  for (const v of Object.values(kp.status?.vifs ?? {})) {
    try {
      ids.push(readVif(v.vif).id);
    } catch {
      // Not a VIF kuryr can read: nothing of ours to update on it.
    }
  }
  return ids.sort();
}

/** What of a policy decides which pods carry its group. */
function selection(knp: KuryrNetworkPolicy): unknown {
  return [knp.spec.podSelector, knp.status?.securityGroupId, knp.status?.podSelector, isDeleting(knp)];
}

class PodLabelReconciler {
  private readonly mgr: Manager;
  private readonly ctx: KuryrContext;

  constructor(mgr: Manager, ctx: KuryrContext) {
    this.mgr = mgr;
    this.ctx = ctx;
  }

  async reconcile(req: Request, signal: AbortSignal): Promise<Result> {
    const { client } = this.mgr;
    const pod = await client.get(kinds.Pod, req, { signal });
    // A pod going away gives its port back to the pool, which sets the pool's groups.
    if (!pod || isDeleting(pod) || !onPodNetwork(pod)) return {};
    const kp = await client.get(kuryrKinds.KuryrPort, req, { signal });
    if (!kp || kp.spec.podUid !== pod.metadata?.uid) return {};
    const ports = portIds(kp);
    if (ports.length === 0) return {};
    const groups = await this.ctx.securityGroups.forPod(pod, signal);
    if (isPending(groups)) return { requeueAfterMs: groups.retryAfterMs };
    for (const id of ports) await this.updatePort(pod, id, groups, signal);
    return {};
  }

  private async updatePort(pod: V1Pod, id: string, groups: string[], signal: AbortSignal): Promise<void> {
    const network = this.ctx.os.network;
    const port = await network.ports.get(id, { signal }).catch(ignoreNotFound);
    if (!port || sameGroups(port.security_groups, groups)) return;
    // A 412 (the port changed since the read) fails the pass: the retry reads it again.
    await network.ports
      .update(id, { security_groups: groups }, { signal, ifRevision: port.revision_number })
      .catch(ignoreNotFound);
    this.mgr.log.debug(
      {
        controller: POD_LABEL_CONTROLLER,
        pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`,
        port: id,
        groups,
      },
      'port security groups updated',
    );
  }
}
