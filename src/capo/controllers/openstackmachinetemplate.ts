/**
 * The OpenStackMachineTemplate controller (CAPO's `openstackmachinetemplate_controller.go`):
 * writes `status.capacity` from the template's flavor (machine/capacity.ts), so the cluster
 * autoscaler can scale a MachineDeployment up from zero, and the OpenStackAuthenticationSucceeded
 * condition (as CAPO's does since its templates have conditions). Nothing else: templates create
 * nothing.
 *
 * The credentials are the template's identityRef, else those of the cluster's OpenStackCluster
 * (the Cluster that owns the template, else the one its `cluster.x-k8s.io/cluster-name` label
 * names); a template with neither is left alone, as CAPO leaves one without an owner Cluster
 * (a ClusterClass template, whose values a topology may still patch). One Nova read per change
 * of the template, and per sync period.
 */
import {
  clone,
  isDeleting,
  patchStatus,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import { isNotFound as isOpenStackNotFound } from '../../openstack/core/errors.ts';
import {
  capoKinds,
  CLUSTER_NAME_LABEL,
  Conditions,
  Reasons,
  type CapiCondition,
  type IdentityRef,
  type OpenStackMachineTemplate,
} from '../api/index.ts';
import { markFalse, markTrue } from '../machine/conditions.ts';
import { IdentityError, type ScopeCache } from '../identity.ts';
import { templateCapacity } from '../machine/capacity.ts';
import { infraClusterName, isPaused } from '../machine/owners.ts';

export const OPENSTACK_MACHINE_TEMPLATE_CONTROLLER = 'openstackmachinetemplate';

export const MachineTemplateEventReasons = {
  FlavorNotFound: 'FlavorNotFound',
  AuthenticationFailed: 'OpenStackAuthenticationFailed',
} as const;

export interface OpenStackMachineTemplateControllerOptions {
  /** `--openstackmachinetemplate-concurrency` (10). */
  workers: number;
  /** Retry after an identity or OpenStack error (15 s). */
  errorRetryMs?: number;
}

export function registerOpenStackMachineTemplateController(
  mgr: Manager,
  scopes: ScopeCache,
  opts: OpenStackMachineTemplateControllerOptions,
): void {
  const errorRetryMs = Math.min(opts.errorRetryMs ?? 15_000, 15_000);
  const reconcile = async (req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> => {
    const tpl = await mgr.client.get(capoKinds.OpenStackMachineTemplate, req, { signal });
    if (!tpl || isDeleting(tpl)) return {};
    const namespace = tpl.metadata?.namespace ?? 'default';
    const clusterName =
      tpl.metadata?.ownerReferences?.find((r) => r.kind === 'Cluster')?.name ??
      tpl.metadata?.labels?.[CLUSTER_NAME_LABEL];
    const cluster = clusterName
      ? await mgr.client.get(capoKinds.Cluster, { namespace, name: clusterName }, { signal })
      : undefined;
    if (isPaused(cluster, tpl)) return {};
    const spec = tpl.spec.template.spec;
    let identityRef: IdentityRef | undefined = spec.identityRef;
    if (!identityRef && cluster) {
      const infra = infraClusterName(cluster);
      const osc = infra
        ? await mgr.client.get(capoKinds.OpenStackCluster, { namespace, name: infra }, { signal })
        : undefined;
      identityRef = osc?.spec.identityRef;
    }
    if (!identityRef) {
      ctx.log.info('no identityRef and no owner Cluster with an OpenStackCluster: capacity left unset');
      return {};
    }
    const draft: OpenStackMachineTemplate = clone(tpl);
    const conditions: CapiCondition[] = draft.status?.conditions ?? [];
    const writeStatus = async (status: Partial<NonNullable<OpenStackMachineTemplate['status']>>) => {
      draft.status = { ...draft.status, ...status, conditions };
      await patchStatus(mgr.api, capoKinds.OpenStackMachineTemplate, tpl, draft, { signal });
    };
    let scope;
    try {
      scope = await scopes.scopeFor({ namespace, identityRef, signal });
    } catch (err) {
      if (!IdentityError.is(err)) throw err;
      markFalse(
        conditions,
        Conditions.OpenStackAuthenticationSucceeded,
        Reasons.OpenStackAuthenticationFailed,
        'Error',
        `${err.message}; ${err.fix}`,
      );
      await writeStatus({});
      mgr.events.event(
        tpl,
        'Warning',
        MachineTemplateEventReasons.AuthenticationFailed,
        `${err.message}; ${err.fix}`,
      );
      ctx.log.warn({ reason: err.reason }, `${err.message}; ${err.fix}`);
      return { requeueAfterMs: errorRetryMs };
    }
    markTrue(conditions, Conditions.OpenStackAuthenticationSucceeded);
    let flavor;
    try {
      const { client } = scope;
      flavor = spec.flavorID
        ? await client.compute.flavors.get(spec.flavorID, { signal })
        : spec.flavor
          ? await client.compute.flavors.findByName(spec.flavor, { signal })
          : undefined;
    } catch (err) {
      if (!isOpenStackNotFound(err)) throw err;
      flavor = undefined;
    } finally {
      scope.release();
    }
    if (!flavor) {
      const what = spec.flavorID ? `flavor ID ${spec.flavorID}` : `flavor ${spec.flavor ?? '(none)'}`;
      mgr.events.event(
        tpl,
        'Warning',
        MachineTemplateEventReasons.FlavorNotFound,
        `${what} not found: capacity left unset`,
      );
      ctx.log.warn(`${what} not found: capacity left unset`);
      await writeStatus({});
      return { requeueAfterMs: errorRetryMs };
    }
    await writeStatus({ capacity: templateCapacity(flavor, spec) });
    return {};
  };
  mgr
    .controller(OPENSTACK_MACHINE_TEMPLATE_CONTROLLER)
    .for(capoKinds.OpenStackMachineTemplate)
    .withOptions({ maxConcurrentReconciles: opts.workers })
    .complete(reconcile);
}
