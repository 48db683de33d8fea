/**
 * What `shiftstack kuryr controller` can run: which controllers each of upstream's handler names
 * (`[kubernetes] enabled_handlers`) stands for, how each controller's module is loaded, and the
 * drivers `pod_subnets_driver` / `pod_security_groups_driver` name. Loaded lazily, so a process
 * loads only the controllers its kuryr.conf enables.
 *
 * Each area adds its own lines (one block per area, so merges are trivial): a loader returning the
 * controller's registration, `(mgr, ctx) => void`, as testing/env.ts's KURYR_CONTROLLERS holds it.
 */
import type { Manager } from '../kube/index.ts';
import type { KuryrContext } from './context.ts';
import type { SecurityGroupsDriver, SubnetsDriver } from './drivers.ts';
import type { Handler } from './options.ts';

/** A controller's registration on the manager, with the shared kuryr context. */
export type RegisterKuryrController = (mgr: Manager, ctx: KuryrContext) => void;

/** Upstream's handler names → our controllers (their work-queue and metrics names, kuryr-common). */
export const HANDLER_CONTROLLERS: Readonly<Record<Handler, readonly string[]>> = {
  vif: ['pod'],
  kuryrport: ['kuryrport'],
  namespace: ['namespace'],
  kuryrnetwork: ['kuryrnetwork'],
  kuryrnetwork_population: ['kuryrnetwork-population'],
  service: ['service'],
  endpoints: ['endpointslice'],
  kuryrloadbalancer: ['kuryrloadbalancer'],
  policy: ['networkpolicy'],
  kuryrnetworkpolicy: ['kuryrnetworkpolicy'],
  pod_label: ['pod-label'],
};

/** The controllers of `handlers`, in the order the handlers name them, each once. */
export function controllersFor(handlers: readonly Handler[]): string[] {
  return [...new Set(handlers.flatMap((h) => HANDLER_CONTROLLERS[h]))];
}

export type ControllerLoader = () => Promise<RegisterKuryrController>;

/** Each controller's module, loaded only when a handler enables it; upstream's timings (the bed's are faster). */
export const CONTROLLER_LOADERS: Readonly<Record<string, ControllerLoader>> = {
  // kuryr-pods: pod, kuryrport, kuryrnetwork-population
  pod: async () => {
    const { registerPodController } = await import('./controllers/pod.ts');
    return (mgr, ctx) => registerPodController(mgr, ctx);
  },
  kuryrport: async () => {
    const { registerKuryrPortController } = await import('./controllers/kuryrport.ts');
    return (mgr, ctx) => registerKuryrPortController(mgr, ctx);
  },
  'kuryrnetwork-population': async () => {
    const { registerKuryrNetworkPopulationController } =
      await import('./controllers/kuryrnetwork-population.ts');
    return (mgr, ctx) => registerKuryrNetworkPopulationController(mgr, ctx);
  },
  // kuryr-net: namespace, kuryrnetwork
  namespace: async () => (await import('./controllers/namespace.ts')).registerNamespaceController,
  kuryrnetwork: async () => (await import('./controllers/kuryrnetwork.ts')).registerKuryrNetworkController,
  // kuryr-lb: service, endpointslice, kuryrloadbalancer
  service: async () => {
    const { registerServiceController } = await import('./controllers/service.ts');
    return (mgr, ctx) => registerServiceController(mgr, ctx);
  },
  endpointslice: async () => {
    const { registerEndpointSliceController } = await import('./controllers/service.ts');
    return (mgr, ctx) => registerEndpointSliceController(mgr, ctx);
  },
  kuryrloadbalancer: async () => {
    const { registerKuryrLoadBalancerController } = await import('./controllers/kuryrloadbalancer.ts');
    return (mgr, ctx) => registerKuryrLoadBalancerController(mgr, ctx);
  },
  // kuryr-np: networkpolicy, kuryrnetworkpolicy, pod-label
  networkpolicy: async () => (await import('./controllers/networkpolicy.ts')).registerNetworkPolicyController,
  kuryrnetworkpolicy: async () =>
    (await import('./controllers/kuryrnetworkpolicy.ts')).registerKuryrNetworkPolicyController,
  'pod-label': async () => (await import('./controllers/pod-label.ts')).registerPodLabelController,
};

/**
 * The drivers the options name beyond the default ones (context.ts builds those): built on the
 * manager (a driver may read KuryrNetworks or NetworkPolicies from its cache) and the context.
 */
export const SUBNETS_DRIVER_LOADERS: Readonly<
  Partial<Record<'namespace', () => Promise<(mgr: Manager, ctx: KuryrContext) => SubnetsDriver>>>
> = {
  // kuryr-net: namespace
  namespace: async () => (await import('./network/namespace-driver.ts')).namespaceSubnets,
};

export const SECURITY_GROUPS_DRIVER_LOADERS: Readonly<
  Partial<Record<'policy', () => Promise<(mgr: Manager, ctx: KuryrContext) => SecurityGroupsDriver>>>
> = {
  // kuryr-np: policy
  policy: async () => {
    const { policySecurityGroups } = await import('./policy/driver.ts');
    return (mgr, ctx) => policySecurityGroups(mgr.client, ctx.options);
  },
};
