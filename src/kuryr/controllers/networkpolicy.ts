/**
 * The `networkpolicy` controller (upstream's NetworkPolicyHandler, `policy` handler): a
 * NetworkPolicy becomes the KuryrNetworkPolicy of the same name, whose spec holds the security-group
 * rules the policy means over the cluster as it is now (src/kuryr/policy/rules.ts). The
 * kuryrnetworkpolicy controller makes Neutron hold them.
 *
 * Per reconcile, from the cache: the finalizer on the NetworkPolicy; the rules from the pods (their
 * VIF addresses from the KuryrPorts), namespaces (their KuryrNetwork subnets), Services and the
 * configured subnets; the KuryrNetworkPolicy created, or its spec patched when the rules changed —
 * the steady state writes nothing. What the policy asks and cannot be expressed is a Warning Event
 * on it, once per change of the rules.
 *
 * Any change to what the rules read (a pod's labels or address, a namespace's labels or subnet, a
 * Service) re-renders every policy: the rules of one policy can name pods of any namespace, and a
 * render is a pure function of the cache, so one policy more costs no API call.
 *
 * Delete: the KuryrNetworkPolicy is deleted (its own finalizer takes the group off the ports and
 * deletes it), and the NetworkPolicy's finalizer goes once the KuryrNetworkPolicy is gone.
 */
import { isDeepStrictEqual } from 'node:util';
import type { V1NetworkPolicy, V1Pod } from '@kubernetes/client-node';
import {
  addFinalizer,
  fieldsChanged,
  hasFinalizer,
  isAlreadyExists,
  isDeleting,
  isNotFound,
  KubeApiError,
  kinds,
  labelChanged,
  mergePatch,
  objectKey,
  removeFinalizer,
  specOrMetadataChanged,
  type Manager,
  type Request,
  type Result,
} from '../../kube/index.ts';
import { defaultVif, Finalizers, kuryrKinds, type KuryrNetworkPolicy, type KuryrPort } from '../api/index.ts';
import type { KuryrContext } from '../context.ts';
import { usePolicySecurityGroups } from '../policy/driver.ts';
import { SubnetCidrs } from '../policy/networks.ts';
import { translatePolicy, type PolicyRules } from '../policy/rules.ts';
import { podFacts, policyWorld, serviceFacts } from '../policy/world.ts';

export const NETWORK_POLICY_CONTROLLER = 'networkpolicy';

/** The annotation upstream puts on a KuryrNetworkPolicy: the path of its NetworkPolicy. */
export const NETWORK_POLICY_LINK = 'networkPolicyLink';

export const NetworkPolicyEventReasons = {
  /** Part of the policy has no security-group form (an ipBlock that is no CIDR, …). */
  NotFullyEnforced: 'PolicyNotFullyEnforced',
} as const;

export function registerNetworkPolicyController(mgr: Manager, ctx: KuryrContext): void {
  usePolicySecurityGroups(mgr.client, ctx);
  const r = new NetworkPolicyReconciler(mgr, ctx);
  const policies = mgr.informers.informerFor(kinds.NetworkPolicy);
  const everyPolicy = () => policies.list().map((p) => objectKey(p));
  mgr
    .controller(NETWORK_POLICY_CONTROLLER)
    .for(kinds.NetworkPolicy, { predicates: [specOrMetadataChanged()] })
    .owns(kuryrKinds.KuryrNetworkPolicy, { onlyController: false, predicates: [specOrMetadataChanged()] })
    .watches(kinds.Pod, everyPolicy, { predicates: [fieldsChanged(podFacts)] })
    .watches(kinds.Namespace, everyPolicy, { predicates: [labelChanged()] })
    .watches(kinds.Service, everyPolicy, { predicates: [fieldsChanged(serviceFacts)] })
    .watches(kuryrKinds.KuryrPort, everyPolicy, {
      predicates: [fieldsChanged<KuryrPort>((kp) => [kp.spec.podUid, vifAddress(kp)])],
    })
    .watches(kuryrKinds.KuryrNetwork, everyPolicy, {
      predicates: [fieldsChanged((kn) => kn.status?.subnetCIDR)],
    })
    .complete(r);
}

/** The address of a KuryrPort's default VIF, or none (also for a primitive that does not read). */
export function vifAddress(kp: KuryrPort | undefined): string | undefined {
  try {
    return defaultVif(kp?.status?.vifs)?.vif.network.subnets[0]?.ips[0];
  } catch {
    return undefined;
  }
}

export function networkPolicyLink(np: V1NetworkPolicy): string {
  return `/apis/networking.k8s.io/v1/namespaces/${np.metadata?.namespace}/networkpolicies/${np.metadata?.name}`;
}

class NetworkPolicyReconciler {
  private readonly mgr: Manager;
  private readonly ctx: KuryrContext;
  private readonly subnets: SubnetCidrs;

  constructor(mgr: Manager, ctx: KuryrContext) {
    this.mgr = mgr;
    this.ctx = ctx;
    this.subnets = new SubnetCidrs(ctx.os.network);
  }

  async reconcile(req: Request, signal: AbortSignal): Promise<Result> {
    const { client } = this.mgr;
    const np = await client.get(kinds.NetworkPolicy, req, { signal });
    if (!np) return {};
    const knp = await client.get(kuryrKinds.KuryrNetworkPolicy, req, { signal });
    if (isDeleting(np)) return this.finalize(np, knp, signal);

    const live = await addFinalizer(client.api, kinds.NetworkPolicy, np, Finalizers.NetworkPolicy, {
      signal,
    });
    const rules = await this.render(live, signal);
    const spec: KuryrNetworkPolicy['spec'] = {
      ingressSgRules: rules.ingressSgRules,
      egressSgRules: rules.egressSgRules,
      podSelector: { ...live.spec?.podSelector },
      policyTypes: live.spec?.policyTypes ?? [],
    };
    if (!knp) {
      await this.create(live, spec, signal);
      this.report(live, rules);
      return {};
    }
    // Being deleted by someone else: it is made again once gone (its delete wakes us).
    if (isDeleting(knp)) return {};
    if (isDeepStrictEqual(knp.spec, spec)) return {};
    await mergePatch(client.api, kuryrKinds.KuryrNetworkPolicy, knp, { ...knp, spec }, { signal });
    this.report(live, rules);
    return {};
  }

  private async render(np: V1NetworkPolicy, signal: AbortSignal): Promise<PolicyRules> {
    const { client } = this.mgr;
    const [pods, namespaces, services, ports, networks] = await Promise.all([
      client.list(kinds.Pod, { signal }),
      client.list(kinds.Namespace, { signal }),
      client.list(kinds.Service, { signal }),
      client.list(kuryrKinds.KuryrPort, { signal }),
      client.list(kuryrKinds.KuryrNetwork, { signal }),
    ]);
    const byPod = new Map(ports.map((kp) => [`${kp.metadata?.namespace}/${kp.metadata?.name}`, kp]));
    // A KuryrPort is its pod's only while it names the pod's uid (a pod made again under the same name).
    const vifIp = (pod: V1Pod) => {
      const kp = byPod.get(`${pod.metadata?.namespace}/${pod.metadata?.name}`);
      return kp?.spec?.podUid === pod.metadata?.uid ? vifAddress(kp) : undefined;
    };
    const nsCidr = new Map<string, string>();
    for (const kn of networks) {
      const cidr = kn.status?.subnetCIDR;
      if (cidr && kn.metadata?.namespace === kn.spec?.nsName) nsCidr.set(kn.spec.nsName, cidr);
    }
    const world = policyWorld(
      { pods, namespaces, services },
      { vifIp, namespaceCidr: (ns) => nsCidr.get(ns) },
    );
    const o = this.ctx.options;
    const cidrs = await this.subnets.networks(
      {
        serviceSubnet: o.neutronDefaults.serviceSubnet || undefined,
        workerSubnets: o.podVifNested.workerNodesSubnets,
        podSubnet: o.neutronDefaults.podSubnet || undefined,
      },
      [...nsCidr.values()],
      signal,
    );
    return translatePolicy(np, world, cidrs, { enforceSgRules: o.octaviaDefaults.enforceSgRules });
  }

  private async create(
    np: V1NetworkPolicy,
    spec: KuryrNetworkPolicy['spec'],
    signal: AbortSignal,
  ): Promise<void> {
    const knp: KuryrNetworkPolicy = {
      apiVersion: 'openstack.org/v1',
      kind: 'KuryrNetworkPolicy',
      metadata: {
        name: np.metadata?.name ?? '',
        namespace: np.metadata?.namespace ?? '',
        annotations: { [NETWORK_POLICY_LINK]: networkPolicyLink(np) },
        finalizers: [Finalizers.NetworkPolicy],
        ownerReferences: [
          {
            apiVersion: 'networking.k8s.io/v1',
            kind: 'NetworkPolicy',
            name: np.metadata?.name ?? '',
            uid: np.metadata?.uid ?? '',
          },
        ],
      },
      spec,
      status: { securityGroupRules: [] },
    };
    try {
      await this.mgr.client.api.create(kuryrKinds.KuryrNetworkPolicy, knp, { signal });
    } catch (err) {
      // Our cache is behind a create of ours: the next event brings it, and the spec is compared then.
      if (isAlreadyExists(err)) return;
      // The namespace is going, the policy with it (upstream ignores the policy too).
      if (KubeApiError.is(err) && err.code === 403 && /being terminated/.test(err.message)) return;
      throw err;
    }
  }

  private report(np: V1NetworkPolicy, rules: PolicyRules): void {
    if (rules.problems.length === 0) return;
    this.mgr.events.event(
      np,
      'Warning',
      NetworkPolicyEventReasons.NotFullyEnforced,
      `Not enforced: ${rules.problems.join('; ')}`,
    );
  }

  private async finalize(
    np: V1NetworkPolicy,
    knp: KuryrNetworkPolicy | undefined,
    signal: AbortSignal,
  ): Promise<Result> {
    const { client } = this.mgr;
    if (knp) {
      if (!isDeleting(knp)) {
        await client.api
          .delete(kuryrKinds.KuryrNetworkPolicy, objectKey(knp), { signal })
          .catch((err: unknown) => {
            if (!isNotFound(err)) throw err;
          });
      }
      // The KuryrNetworkPolicy's removal wakes us (owns).
      return {};
    }
    if (hasFinalizer(np, Finalizers.NetworkPolicy)) {
      await removeFinalizer(client.api, kinds.NetworkPolicy, np, Finalizers.NetworkPolicy, { signal });
    }
    return {};
  }
}
