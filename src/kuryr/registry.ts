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

/** Each controller's module, loaded only when a handler enables it. */
export const CONTROLLER_LOADERS: Readonly<Record<string, ControllerLoader>> = {
  // kuryr-pods: pod, kuryrport, kuryrnetwork-population
  // kuryr-net: namespace, kuryrnetwork
  // kuryr-lb: service, endpointslice, kuryrloadbalancer
  // kuryr-np: networkpolicy, kuryrnetworkpolicy, pod-label
};

/**
 * The drivers the options name beyond the default ones (context.ts builds those): built on the
 * manager (a driver may read KuryrNetworks or NetworkPolicies from its cache) and the context.
 */
export const SUBNETS_DRIVER_LOADERS: Readonly<
  Partial<Record<'namespace', () => Promise<(mgr: Manager, ctx: KuryrContext) => SubnetsDriver>>>
> = {
  // kuryr-net: namespace
};

export const SECURITY_GROUPS_DRIVER_LOADERS: Readonly<
  Partial<Record<'policy', () => Promise<(mgr: Manager, ctx: KuryrContext) => SecurityGroupsDriver>>>
> = {
  // kuryr-np: policy
};
