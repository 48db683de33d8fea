/**
 * kube-controller-manager's service controller with the in-tree OpenStack provider, as it ran
 * before 1.26: the k8s.io/cloud-provider service controller (finalizer, status, Events, one Service
 * at a time with `--concurrent-service-syncs=1`, 5 s to 300 s back-off on failure) over the in-tree
 * provider's EnsureLoadBalancer, UpdateLoadBalancer and EnsureLoadBalancerDeleted.
 *
 * The Octavia calls go through the shared load-balancer engine in serial mode with the in-tree
 * names (load-balancer.ts): one object per call, and between two calls the worker BLOCKS, polling
 * the load balancer as the in-tree provider's waitLoadbalancerActiveProvisioningStatus did (1 s,
 * × 1.2, 19 polls), so a slow Octavia holds up every other Service: the honest baseline the CCM is
 * measured against. Work runs through the gate of who owns the cloud loops (cloud-owner.ts), so a
 * handover stops it between two calls.
 */
import type { V1Node, V1Service } from '@kubernetes/client-node';
import { eligibleNodes } from '../../ccm/members.ts';
import { legacyLoadBalancerName } from '../../ccm/naming.ts';
import type { LiveConfig } from '../../ccm/config/types.ts';
import { FrameworkReason } from '../../ccm/events.ts';
import type { OpenStackApi } from '../../ccm/secret-config.ts';
import {
  LOAD_BALANCER_FINALIZER,
  SERVICE_RETRY_MAX_MS,
  SERVICE_RETRY_MIN_MS,
} from '../../ccm/controllers/service.ts';
import { wantsLoadBalancer } from '../../ccm/service-config.ts';
import {
  addFinalizer,
  clone,
  fieldsChanged,
  hasFinalizer,
  isDeleting,
  ItemExponentialFailureRateLimiter,
  kinds,
  objectKey,
  patchStatus,
  removeFinalizer,
  specOrMetadataChanged,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import {
  LoadBalancerEngine,
  type DesiredLoadBalancer,
  type EnsureResult,
  type RemoveResult,
} from '../../openstack/services/loadbalancer/index.ts';
import type { CloudLoopsGate } from './cloud-owner.ts';
import { inTreeIntent, inTreeLoadBalancer, type InTreeIntent } from './load-balancer.ts';

export const SERVICE_CONTROLLER = 'service';

/** The in-tree provider's waitLoadbalancerActiveProvisioningStatus: 1 s, × 1.2, 19 polls (≈ 128 s). */
export interface InTreeWaits {
  initialMs: number;
  factor: number;
  steps: number;
}
export const IN_TREE_WAITS: InTreeWaits = { initialMs: 1_000, factor: 1.2, steps: 19 };
/** Bound on the calls of one sync (each an Octavia or Neutron call with its poll). */
const MAX_CALLS_PER_SYNC = 10_000;

export interface InTreeServiceOptions {
  /** `--concurrent-service-syncs` (1). */
  workers: number;
  waits: InTreeWaits;
  /** The failure back-off (upstream's 5 s to 300 s), scaled like the waits. */
  retry?: { minMs: number; maxMs: number };
}

/** A failed sync, with the in-tree provider's text: the queue backs off and tries again. */
export class InTreeSyncError extends Error {
  override readonly name = 'InTreeSyncError';
  readonly service: string;
  constructor(service: string, message: string) {
    super(`${service}: ${message}`);
    this.service = service;
  }
}

export function registerInTreeServiceController(
  mgr: Manager,
  os: OpenStackApi,
  config: LiveConfig,
  gate: CloudLoopsGate,
  opts: InTreeServiceOptions,
): void {
  const r = new InTreeServiceReconciler(mgr, os, config, opts);
  const services = mgr.informers.informerFor(kinds.Service);
  const all = () =>
    services
      .list()
      .filter((s) => wantsLoadBalancer(s) || hasFinalizer(s, LOAD_BALANCER_FINALIZER))
      .map((s) => objectKey(s));
  const controller = mgr
    .controller(SERVICE_CONTROLLER)
    // Not its own status writes (the framework's needsUpdate ignores the status).
    .for(kinds.Service, { predicates: [specOrMetadataChanged()] })
    // UpdateLoadBalancer on a change of the Nodes' labels, taints or addresses.
    .watches(kinds.Node, () => all(), { predicates: [memberRelevant] })
    .withOptions({
      maxConcurrentReconciles: opts.workers,
      rateLimiter: new ItemExponentialFailureRateLimiter<string>(
        opts.retry?.minMs ?? SERVICE_RETRY_MIN_MS,
        opts.retry?.maxMs ?? SERVICE_RETRY_MAX_MS,
      ),
    })
    .complete(async (req, signal, ctx) => (await gate.run(signal, (s) => r.reconcile(req, s, ctx))) ?? {});
  // What was skipped while another controller owned the loops is looked at again.
  gate.onOpen(() => {
    for (const key of all()) controller.enqueue(key);
  });
}

const memberRelevant = fieldsChanged<V1Node>((n) => [
  n.metadata?.labels,
  n.spec?.taints,
  n.status?.addresses,
]);

class InTreeServiceReconciler {
  private readonly mgr: Manager;
  private readonly os: OpenStackApi;
  private readonly config: LiveConfig;
  private readonly opts: InTreeServiceOptions;
  private readonly engine: LoadBalancerEngine;

  constructor(mgr: Manager, os: OpenStackApi, config: LiveConfig, opts: InTreeServiceOptions) {
    this.mgr = mgr;
    this.os = os;
    this.config = config;
    this.opts = opts;
    this.engine = new LoadBalancerEngine(os, { now: () => mgr.clock.now() });
  }

  async reconcile(req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    let svc = await this.mgr.client.get(kinds.Service, req, { signal });
    if (!svc) return {};
    if (isDeleting(svc) || !wantsLoadBalancer(svc)) {
      if (hasFinalizer(svc, LOAD_BALANCER_FINALIZER)) await this.delete(svc, signal, ctx);
      return {};
    }
    if (!hasFinalizer(svc, LOAD_BALANCER_FINALIZER))
      svc = await addFinalizer(this.mgr.api, kinds.Service, svc, LOAD_BALANCER_FINALIZER, { signal });
    await this.ensure(svc, signal, ctx);
    return {};
  }

  private async ensure(svc: V1Service, signal: AbortSignal, ctx: ReconcileContext): Promise<void> {
    const key = `${svc.metadata?.namespace}/${svc.metadata?.name}`;
    const opts = this.config.current().loadBalancer;
    const nodes = eligibleNodes(await this.mgr.client.list(kinds.Node, { signal }), new Map());
    const checked = inTreeIntent(svc, nodes, opts);
    if (!checked.ok) return this.failed(svc, key, checked.message);
    const { intent } = checked;
    const subnetId = intent.subnetId ?? (await this.subnetOf(nodes[0], signal));
    if (!subnetId) {
      return this.failed(
        svc,
        key,
        `no subnet-id for service ${key} : subnet-id not set in cloud provider config, and failed to find subnet-id from OpenStack: no port of node ${nodes[0]?.metadata?.name} holds its address`,
      );
    }
    const floatingNetworkId = intent.internal
      ? undefined
      : (intent.floatingNetworkId ?? (await this.floatingNetwork(signal)));
    if (!intent.internal && !floatingNetworkId) {
      return this.failed(
        svc,
        key,
        'floating-network-id or loadbalancer.openstack.org/floating-network-id should be specified when ensuring an external loadbalancer service',
      );
    }
    const desired = inTreeLoadBalancer({ svc, intent, nodes, opts, subnetId, floatingNetworkId });
    let announced = false;
    const done = await this.drive(
      () => this.engine.ensure(desired, { signal }),
      signal,
      (r) => {
        // EnsuringLoadBalancer once there is work to do; nothing on a sync that changes nothing.
        if (!announced && r.actions.length > 0) {
          announced = true;
          this.mgr.events.event(
            svc,
            'Normal',
            FrameworkReason.EnsuringLoadBalancer,
            'Ensuring load balancer',
          );
        }
      },
    );
    if (done.phase === 'Failed') return this.failed(svc, key, done.message);
    if (done.phase !== 'Ready') return;
    if (svc.status?.loadBalancer?.ingress?.[0]?.ip !== done.address) {
      const draft = clone(svc);
      draft.status = { ...draft.status, loadBalancer: { ingress: [{ ip: done.address }] } };
      await patchStatus(this.mgr.api, kinds.Service, svc, draft, { signal });
      announced = true;
    }
    if (announced) {
      this.mgr.events.event(svc, 'Normal', FrameworkReason.EnsuredLoadBalancer, 'Ensured load balancer');
      ctx.log.info({ loadBalancer: done.loadBalancer.id, address: done.address }, 'load balancer ensured');
    }
  }

  private async delete(svc: V1Service, signal: AbortSignal, ctx: ReconcileContext): Promise<void> {
    const key = `${svc.metadata?.namespace}/${svc.metadata?.name}`;
    this.mgr.events.event(svc, 'Normal', FrameworkReason.DeletingLoadBalancer, 'Deleting load balancer');
    const desired = this.removalTarget(svc);
    const done = await this.drive(() => this.engine.remove(desired, { signal }), signal);
    if (done.phase === 'Failed') {
      this.mgr.events.event(
        svc,
        'Warning',
        FrameworkReason.DeleteLoadBalancerFailed,
        `Error deleting load balancer: ${done.message}`,
      );
      throw new InTreeSyncError(key, done.message);
    }
    if (!isDeleting(svc) && (svc.status?.loadBalancer?.ingress ?? []).length > 0) {
      const draft = clone(svc);
      draft.status = { ...draft.status, loadBalancer: {} };
      svc = await patchStatus(this.mgr.api, kinds.Service, svc, draft, { signal });
    }
    await removeFinalizer(this.mgr.api, kinds.Service, svc, LOAD_BALANCER_FINALIZER, { signal });
    this.mgr.events.event(svc, 'Normal', FrameworkReason.DeletedLoadBalancer, 'Deleted load balancer');
    ctx.log.info('load balancer deleted');
  }

  /** EnsureLoadBalancerDeleted needs the load balancer's names and its floating IP rule only. */
  private removalTarget(svc: V1Service): DesiredLoadBalancer {
    const intent: InTreeIntent = { lbName: legacyLoadBalancerName(svc.metadata?.uid ?? ''), internal: false };
    return inTreeLoadBalancer({
      svc: { ...svc, spec: { ...svc.spec, ports: [] } },
      intent,
      nodes: [],
      opts: this.config.current().loadBalancer,
      subnetId: '',
    });
  }

  /**
   * Calls `step` until it is done, sleeping between calls as the in-tree provider's waits did: after
   * each write the poll starts again at `initialMs`; `steps` polls without progress is its timeout.
   */
  private async drive<R extends EnsureResult | RemoveResult>(
    step: () => Promise<R>,
    signal: AbortSignal,
    onResult: (r: R) => void = () => {},
  ): Promise<R> {
    const { initialMs, factor, steps } = this.opts.waits;
    let polls = 0;
    for (let call = 0; call < MAX_CALLS_PER_SYNC; call++) {
      const r = await step();
      onResult(r);
      if (r.phase !== 'Pending') return r;
      if (r.actions.length > 0) polls = 0;
      else if (++polls > steps) {
        return {
          ...r,
          phase: 'Failed',
          reason: 'LoadBalancerError',
          message: `failed to loadbalance ACTIVE provisioning status: loadbalancer failed to go into ACTIVE provisioning status within alloted time (${r.message})`,
        };
      }
      await this.mgr.clock.sleep(initialMs * factor ** polls, signal);
    }
    throw new Error(`a sync made ${MAX_CALLS_PER_SYNC} calls without converging`);
  }

  /** getSubnetIDForLB: the subnet of the fixed IP that holds the first node's address, on its server's ports. */
  private async subnetOf(node: V1Node | undefined, signal: AbortSignal): Promise<string | undefined> {
    const address = node?.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
    const serverId = node?.spec?.providerID?.split('/').pop();
    if (!address || !serverId) return undefined;
    const ports = await this.os.network.ports.list({ device_id: serverId }, { signal }).all();
    return ports.flatMap((p) => p.fixed_ips).find((f) => f.ip_address === address)?.subnet_id;
  }

  /** getFloatingNetworkIDForLB: the first external network. */
  private async floatingNetwork(signal: AbortSignal): Promise<string | undefined> {
    const [first] = await this.os.network.networks.list({ 'router:external': true }, { signal }).all();
    return first?.id;
  }

  private failed(svc: V1Service, key: string, message: string): never {
    const text = `failed to ensure load balancer: ${message}`;
    this.mgr.events.event(
      svc,
      'Warning',
      FrameworkReason.SyncLoadBalancerFailed,
      `Error syncing load balancer: ${text}`,
    );
    throw new InTreeSyncError(key, text);
  }
}
