/**
 * The scenario's migration steps, on a cluster that started on the in-tree provider
 * (controllers.ts, `cloudLoops: 'in-tree'`):
 *
 *   the operator waits while kube-controller-manager owns the cloud loops → kube-controller-manager
 *   goes external and the operator deploys `shiftstack ccm`, which adopts the Service's load balancer
 *   (same id, same IP, what it writes counted) → a UDP Service, which the in-tree provider refused
 *
 * Who acted when comes from the OpenStack emulator's journal of requests, by User-Agent: the
 * in-tree stand-in calls as `shiftstack-kube-controller-manager`, the ccm as `shiftstack-ccm`.
 */
import type { V1Deployment, V1Service } from '@kubernetes/client-node';
import { kinds, type KubernetesObject, type ResourceType } from '../kube/index.ts';
import {
  CLUSTER,
  CLUSTER_OPERATOR_NAME,
  Conditions,
  MANAGED_NAMESPACE,
  operatorKinds,
  type ClusterOperator,
  type KubeControllerManager,
} from '../ccm-operator/api/index.ts';
import { OPENSTACK_CCM_NAME } from '../ccm-operator/operands/openstack.ts';
import { sendKubeControllerManagerExternal } from './openshift.ts';
import { seconds } from './progress.ts';
import type { ScenarioOptions, Step } from './scenario.ts';
import { lbMembers, mustHave, until } from './waits.ts';

export const UDP_SERVICE = { namespace: 'default', name: 'demo-dns' } as const;
export const LB_ID_ANNOTATION = 'loadbalancer.openstack.org/load-balancer-id';
export const KCM_CALLER = 'shiftstack-kube-controller-manager';
const CCM_CALLER = 'shiftstack-ccm';

/** What the handover steps read from the steps before them and leave to the ones after. */
export interface HandoverState {
  /** The TCP Service the in-tree provider served, and what it had before the handover. */
  service: { namespace: string; name: string };
  externalIP?: string;
  loadBalancerId?: string;
  /** The UDP Service's load balancer, once the ccm made it. */
  udpLoadBalancerId?: string;
}

export function handoverSteps(opts: ScenarioOptions, state: HandoverState): Step[] {
  const { world, controllers } = opts;
  const api = world.api;
  mustHave(controllers.migration, 'the demo runs no in-tree provider');
  const cached = <T extends KubernetesObject>(type: ResourceType<T>): T[] =>
    controllers.demo.informers.informerFor(type).list();
  const operator = () =>
    cached<ClusterOperator>(operatorKinds.ClusterOperator).find(
      (c) => c.metadata?.name === CLUSTER_OPERATOR_NAME,
    );
  const condition = (
    co: { status?: { conditions?: { type: string; status: string }[] } } | undefined,
    type: string,
  ) => co?.status?.conditions?.find((c) => c.type === type)?.status;
  const ccmDeployment = () =>
    cached<V1Deployment>(kinds.Deployment).find(
      (d) => d.metadata?.namespace === MANAGED_NAMESPACE && d.metadata.name === OPENSTACK_CCM_NAME,
    );
  const service = (name: string) =>
    cached<V1Service>(kinds.Service).find(
      (s) => s.metadata?.namespace === 'default' && s.metadata.name === name,
    );

  return [
    {
      name: 'ccm-operator waits: kube-controller-manager’s in-tree provider owns the cloud loops (CloudControllerOwner=True)',
      budgetMs: 30_000,
      async run(signal) {
        const co = await until(signal, `ClusterOperator ${CLUSTER_OPERATOR_NAME} reporting`, () => {
          const c = operator();
          return condition(c, Conditions.Available) === 'True' ? c : undefined;
        });
        if (ccmDeployment())
          throw new Error('the operator deployed a CCM while the in-tree provider owns the loops');
        const owner = co.status?.conditions?.find((c) => c.type === Conditions.CloudControllerOwner);
        return (
          `ClusterOperator ${CLUSTER_OPERATOR_NAME} Available with CloudControllerOwner=${owner?.status ?? 'unset'} ` +
          '(KubeControllerManager cluster says True); ' +
          `nothing deployed in ${MANAGED_NAMESPACE}`
        );
      },
    },
    {
      name: 'kube-controller-manager goes --cloud-provider=external; the operator deploys shiftstack ccm, which adopts the load balancer',
      budgetMs: 180_000,
      async run(signal) {
        const lbId = mustHave(state.loadBalancerId, 'the Service step found no load balancer');
        const ip = mustHave(state.externalIP, 'the Service step saw no external IP');
        const journal = world.sim.cloud.stats;
        const since = journal.requests(0, { service: 'none' }).last;
        const lost: string[] = [];
        await sendKubeControllerManagerExternal(api, signal);
        await until(signal, 'KubeControllerManager CloudControllerOwner=False', () => {
          const kcm = cached<KubeControllerManager>(operatorKinds.KubeControllerManager).find(
            (k) => k.metadata?.name === CLUSTER,
          );
          const c = kcm?.status?.conditions?.find((x) => x.type === Conditions.CloudControllerOwner);
          return c?.status === 'False' ? c : undefined;
        });
        const stoppedAt = Date.now();
        const adopted = await until(
          signal,
          `shiftstack ccm serving ${state.service.name} on the same load balancer`,
          () => {
            const svc = service(state.service.name);
            const now = svc?.status?.loadBalancer?.ingress?.[0]?.ip;
            if (now !== ip) lost.push(now ?? '(none)');
            const d = ccmDeployment();
            const co = operator();
            return (d?.status?.availableReplicas ?? 0) >= 1 &&
              condition(co, Conditions.CloudControllerOwner) === 'True' &&
              condition(co, Conditions.Available) === 'True' &&
              svc?.metadata?.annotations?.[LB_ID_ANNOTATION]
              ? svc
              : undefined;
          },
        );
        const recorded = adopted.metadata?.annotations?.[LB_ID_ANNOTATION];
        if (recorded !== lbId)
          throw new Error(`the ccm recorded load balancer ${recorded}, not the in-tree one ${lbId}`);
        if (lost.length > 0)
          throw new Error(`the Service's external IP changed during the handover: ${lost.join(', ')}`);
        const calls = journal.requests(since).requests;
        if (calls.some((r) => r.caller.includes(KCM_CALLER) && r.write && r.at > stoppedAt))
          throw new Error('the in-tree provider wrote to the cloud after handing over');
        const ccmCalls = calls.filter((r) => r.caller.includes(CCM_CALLER));
        const octaviaWrites = ccmCalls.filter((r) => r.write && r.service === 'octavia');
        const firstCcm = ccmCalls[0]?.at;
        const gap = firstCcm !== undefined ? seconds(firstCcm - stoppedAt) : 'n/a';
        const lb = lbMembers(world, lbId);
        controllers.kubelets.setCloudProvider('external');
        return (
          `${OPENSTACK_CCM_NAME} Available; ${state.service.name} keeps ${ip} on load balancer ${lb?.name ?? lbId}; ` +
          `Octavia writes by the handover: ${octaviaWrites.length}` +
          `${octaviaWrites.length ? ` (${describe(octaviaWrites.map((r) => r.operation))})` : ''}; ` +
          `${gap} with no controller on the cloud loops (the in-tree provider stopped → the ccm’s first call); ` +
          'the kubelets now run with --cloud-provider=external'
        );
      },
    },
    {
      name: `create Service ${UDP_SERVICE.namespace}/${UDP_SERVICE.name} (UDP 53), which the in-tree provider refused, and wait for its external IP`,
      budgetMs: 90_000,
      async run(signal) {
        await api.create(
          kinds.Service,
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { ...UDP_SERVICE, labels: { app: UDP_SERVICE.name } },
            spec: {
              type: 'LoadBalancer',
              selector: { app: UDP_SERVICE.name },
              ports: [{ name: 'dns', protocol: 'UDP', port: 53, targetPort: 5353 }],
            },
          },
          { signal },
        );
        const svc = await until(signal, `an external IP on ${UDP_SERVICE.name}`, () => {
          const s = service(UDP_SERVICE.name);
          return s?.status?.loadBalancer?.ingress?.[0]?.ip && s.metadata?.annotations?.[LB_ID_ANNOTATION]
            ? s
            : undefined;
        });
        state.udpLoadBalancerId = svc.metadata!.annotations![LB_ID_ANNOTATION];
        const lb = lbMembers(world, state.udpLoadBalancerId!);
        return `Service ${UDP_SERVICE.name}: external IP ${svc.status!.loadBalancer!.ingress![0]!.ip} (load balancer ${lb?.name ?? '?'})`;
      },
    },
  ];
}

function describe(ops: string[]): string {
  const counts = new Map<string, number>();
  for (const o of ops) counts.set(o, (counts.get(o) ?? 0) + 1);
  return [...counts].map(([o, n]) => `${n}× ${o}`).join(', ');
}
