/**
 * MAPO's MachineSet controller (`pkg/machineset/controller.go`, work-queue name `machineset-flavor`
 * here, as MAO's own MachineSet controller is `machineset`): each MachineSet gets the annotations
 * `machine.openshift.io/vCPU` and `machine.openshift.io/memoryMb` (MiB) of the flavor its
 * template names, which the cluster-autoscaler reads to scale a set up from zero. MAPO sets these
 * two and nothing else (no GPU count, no architecture label).
 *
 * Flavors come from the FlavorCache (5 minutes while found, 1 minute while missing, per identity).
 * A template whose provider spec cannot be read, names no flavor, or names a flavor Nova does not
 * have: a Warning Event `ReconcileError` (MAPO's reason) and a log line naming the MachineSet, the
 * annotations left as they are; a missing flavor is looked at again when its cache entry expires.
 * Credentials the user must fix: the same, looked at again after `retryMs`. Other annotations are
 * never touched; a MachineSet being deleted, or handed to Cluster API, is left alone.
 */
import {
  isDeleting,
  mergePatch,
  or,
  OwnWrites,
  and,
  specOrMetadataChanged,
  fieldsChanged,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import {
  Annotations,
  decodeProviderSpec,
  formatProviderSpecProblem,
  mapoKinds,
  type MachineSet,
} from '../api/index.ts';
import { FlavorCache } from '../machineset/flavor-cache.ts';
import { isIdentityError, type MapoScopes } from '../scopes.ts';

export const MACHINESET_FLAVOR_CONTROLLER = 'machineset-flavor';

/** MAPO's Event reason for every problem of this controller. */
export const MachineSetFlavorEventReasons = { ReconcileError: 'ReconcileError' } as const;

const WHERE = 'spec.template.spec.providerSpec.value';

export interface MachineSetFlavorControllerOptions {
  /** MachineSets reconciled at once (MAPO: 1). */
  workers?: number;
  /** Looking again after credentials were refused (30 s). */
  retryMs?: number;
  /** Shared by the process's controllers; one per manager by default. */
  flavors?: FlavorCache;
}

export function registerMachineSetFlavorController(
  mgr: Manager,
  scopes: MapoScopes,
  opts: MachineSetFlavorControllerOptions = {},
): void {
  const own = new OwnWrites<MachineSet>();
  const r = new MachineSetFlavorReconciler(mgr, scopes, opts, own);
  mgr
    .controller(MACHINESET_FLAVOR_CONTROLLER)
    .for(mapoKinds.MachineSet, {
      predicates: [
        and(
          or(
            specOrMetadataChanged(),
            fieldsChanged((s) => s.status?.authoritativeAPI),
          ),
          own.predicate(),
        ),
      ],
    })
    .withOptions({ maxConcurrentReconciles: opts.workers ?? 1 })
    .complete((req, signal, ctx) => r.reconcile(req, signal, ctx));
}

class MachineSetFlavorReconciler {
  private readonly mgr: Manager;
  private readonly scopes: MapoScopes;
  private readonly own: OwnWrites<MachineSet>;
  private readonly retryMs: number;
  private readonly flavors: FlavorCache;

  constructor(
    mgr: Manager,
    scopes: MapoScopes,
    opts: MachineSetFlavorControllerOptions,
    own: OwnWrites<MachineSet>,
  ) {
    this.mgr = mgr;
    this.scopes = scopes;
    this.own = own;
    this.retryMs = opts.retryMs ?? 30_000;
    this.flavors = opts.flavors ?? new FlavorCache(mgr.clock);
  }

  async reconcile(req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    const set = await this.mgr.client.get(mapoKinds.MachineSet, req, { signal });
    if (!set || isDeleting(set)) return {};
    const authority = set.status?.authoritativeAPI;
    if (authority === 'ClusterAPI' || authority === 'Migrating') return {};

    const decoded = decodeProviderSpec(set.spec?.template?.spec?.providerSpec?.value, WHERE);
    if (!decoded.spec) {
      const problems = decoded.problems.filter((p) => p.fatal).map(formatProviderSpecProblem);
      this.problem(set, ctx, `failed to read the OpenStack provider spec: ${problems.join('; ')}`);
      return {};
    }
    const spec = decoded.spec;
    const namespace = set.metadata?.namespace ?? 'default';
    const identityRef = { type: 'Secret' as const, name: spec.cloudsSecret.name, cloudName: spec.cloudName };
    const identity = JSON.stringify([namespace, identityRef.name, identityRef.cloudName]);
    let scope;
    try {
      scope = await this.scopes.authenticatedScopeFor({ namespace, identityRef, signal });
    } catch (err) {
      if (!isIdentityError(err)) throw err;
      this.problem(set, ctx, `${err.message}; ${err.fix}`);
      return { requeueAfterMs: this.retryMs };
    }
    let found;
    try {
      const client = scope.client;
      found = await this.flavors.get(identity, spec.flavor, () =>
        client.compute.flavors.findByName(spec.flavor, { signal }),
      );
    } finally {
      scope.release();
    }
    if (!found.flavor) {
      this.problem(
        set,
        ctx,
        `could not find information for flavor ${JSON.stringify(spec.flavor)} (${WHERE}.flavor): no flavor of that name in the project of ${scope.source}; set flavor to one of openstack flavor list`,
      );
      return { requeueAfterMs: this.flavors.retryInMs(found) };
    }

    const wanted = {
      [Annotations.VCPU]: String(found.flavor.vcpus),
      [Annotations.MemoryMb]: String(found.flavor.ramMiB),
    };
    const current = set.metadata?.annotations ?? {};
    if (Object.entries(wanted).every(([k, v]) => current[k] === v)) return {};
    const intended: MachineSet = {
      ...set,
      metadata: { ...set.metadata, annotations: { ...current, ...wanted } },
    };
    this.own.record(
      set,
      intended,
      await mergePatch(this.mgr.api, mapoKinds.MachineSet, set, intended, { signal, optimisticLock: true }),
    );
    ctx.log.info(
      { flavor: spec.flavor, vCPU: wanted[Annotations.VCPU], memoryMb: wanted[Annotations.MemoryMb] },
      'MachineSet annotated with its flavor',
    );
    return {};
  }

  private problem(set: MachineSet, ctx: ReconcileContext, message: string): void {
    const named = `MachineSet ${set.metadata?.namespace}/${set.metadata?.name}: ${message}`;
    this.mgr.events.event(set, 'Warning', MachineSetFlavorEventReasons.ReconcileError, named);
    ctx.log.warn(named);
  }
}
