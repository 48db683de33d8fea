/** Every built-in resource the emulator serves, in one list for the registry. */
import { customresourcedefinitions } from '../crd.ts';
import type { ResourceDef } from '../types.ts';
import { validatingadmissionpolicies, validatingadmissionpolicybindings } from './admissionregistration.ts';
import { daemonsets, deployments } from './apps.ts';
import { cronjobs, jobs } from './batch.ts';
import {
  configmaps,
  endpoints,
  events,
  eventsV1,
  namespaces,
  nodes,
  pods,
  secrets,
  serviceaccounts,
} from './core.ts';
import { endpointslices, ingresses, leases, networkpolicies } from './misc.ts';
import { poddisruptionbudgets, priorityclasses, resourcequotas } from './policy.ts';
import { clusterrolebindings, clusterroles, rolebindings, roles } from './rbac.ts';
import { services } from './services.ts';

export function builtinResources(): ResourceDef[] {
  return [
    namespaces,
    nodes,
    pods,
    services,
    endpoints,
    configmaps,
    secrets,
    serviceaccounts,
    events,
    eventsV1,
    resourcequotas,
    deployments,
    daemonsets,
    jobs,
    cronjobs,
    leases,
    endpointslices,
    networkpolicies,
    ingresses,
    poddisruptionbudgets,
    priorityclasses,
    roles,
    clusterroles,
    rolebindings,
    clusterrolebindings,
    validatingadmissionpolicies,
    validatingadmissionpolicybindings,
    customresourcedefinitions,
  ];
}
