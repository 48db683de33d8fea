/**
 * The `policy` SecurityGroupsDriver (`[kubernetes] pod_security_groups_driver = policy`): a pod's
 * port carries the groups of the KuryrNetworkPolicies that select it, or the default pod groups
 * (pod-groups.ts). It reads the KuryrNetworkPolicies from the manager's cache, so asking costs no
 * API call; a selecting policy without its group yet is a `Pending`, which the caller requeues.
 */
import type { CachedClient } from '../../kube/index.ts';
import { kuryrKinds } from '../api/index.ts';
import type { KuryrContext } from '../context.ts';
import { pending, type SecurityGroupsDriver } from '../drivers.ts';
import type { KuryrOptions } from '../options.ts';
import { podSecurityGroups } from './pod-groups.ts';

/** How soon to ask again for a policy whose group is being made (the KuryrNetworkPolicy's status wakes the pod-label controller sooner). */
const GROUP_WAIT_MS = 1_000;

export function policySecurityGroups(client: CachedClient, options: KuryrOptions): SecurityGroupsDriver {
  return {
    name: 'policy',
    async forPod(pod, signal) {
      const namespace = pod.metadata?.namespace ?? '';
      const policies = await client.list(kuryrKinds.KuryrNetworkPolicy, { namespace, signal });
      const out = podSecurityGroups(
        { namespace, labels: pod.metadata?.labels ?? {} },
        policies,
        options.neutronDefaults.podSecurityGroups,
      );
      if (!out.ready) {
        return pending(
          `the security group of network polic${out.waitingFor.length > 1 ? 'ies' : 'y'} ${out.waitingFor.map((n) => `${namespace}/${n}`).join(', ')}`,
          GROUP_WAIT_MS,
        );
      }
      return out.groups.sort();
    },
  };
}

/**
 * Puts the policy driver in the context when kuryr.conf asks for it
 * (`[kubernetes] pod_security_groups_driver = policy`); idempotent. The command calls it before
 * registering controllers; the policy controllers call it too, so a bed running them has it.
 */
export function usePolicySecurityGroups(client: CachedClient, ctx: KuryrContext): void {
  if (ctx.options.kubernetes.podSecurityGroupsDriver !== 'policy' || ctx.securityGroups.name === 'policy')
    return;
  ctx.securityGroups = policySecurityGroups(client, ctx.options);
}
