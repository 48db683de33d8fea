/**
 * The nodelink controller of the machine-api-operator (`pkg/controller/nodelink/nodelink_controller.go`),
 * for clusters where no machine-api-operator runs (`--act-as-machine-api-operator`). It reconciles
 * Nodes:
 *
 * - finds the Node's Machine by providerID (`spec.providerID` both sides), else by an InternalIP
 *   address (the Node's `status.addresses`, the Machine's `status.addresses`), through indexes;
 *   two Machines for one Node is an error (retried with back-off, as upstream);
 * - sets the Machine's `status.nodeRef` (kind, name, uid) and `lastUpdated`, again whenever the
 *   Node's readiness changes, so the machine controller and the MachineSet (readyReplicas) wake
 *   up; a Node being deleted clears the nodeRef;
 * - annotates the Node `machine.openshift.io/machine=<namespace>/<name>`, sets the labels of the
 *   Machine's `spec.metadata.labels` and adds each of its `spec.taints` that the Node has no taint
 *   of the same key and effect for.
 *
 * Like upstream it only adds: a label or taint later removed from the Machine stays on the Node,
 * and nothing the Node carries is ever taken away (upstream keeps no record of what it added; many
 * components taint Nodes, so no one list is authoritative). Node writes are merge patches guarded
 * by the Node's resourceVersion, so a taint someone adds meanwhile is never overwritten.
 */
import type { V1Node, V1Taint } from '@kubernetes/client-node';
import {
  clone,
  fieldsChanged,
  isNotFound,
  kinds,
  mergePatch,
  patchStatus,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import { metaTime } from '../../kube/time.ts';
import { Annotations, mapoKinds, type Machine } from '../api/index.ts';
import { isNodeReady } from './machineset-status.ts';

export const NODELINK_CONTROLLER = 'nodelink';

const NODE_BY_PROVIDER_ID = 'nodelink/node-providerID';
const NODE_BY_INTERNAL_IP = 'nodelink/node-internalIP';
const MACHINE_BY_PROVIDER_ID = 'nodelink/machine-providerID';
const MACHINE_BY_INTERNAL_IP = 'nodelink/machine-internalIP';

export interface NodelinkControllerOptions {
  workers?: number;
}

const internalIPs = (addresses: readonly { type?: string; address?: string }[] | undefined): string[] =>
  (addresses ?? []).filter((a) => a.type === 'InternalIP' && a.address).map((a) => a.address as string);

export function registerNodelinkController(mgr: Manager, opts: NodelinkControllerOptions = {}): void {
  const nodes = mgr.informers.informerFor(kinds.Node, {
    indexers: {
      [NODE_BY_PROVIDER_ID]: (n) => (n.spec?.providerID ? [n.spec.providerID] : []),
      [NODE_BY_INTERNAL_IP]: (n) => internalIPs(n.status?.addresses),
    },
  });
  mgr.informers.informerFor(mapoKinds.Machine, {
    indexers: {
      [MACHINE_BY_PROVIDER_ID]: (m) => (m.spec?.providerID ? [m.spec.providerID] : []),
      [MACHINE_BY_INTERNAL_IP]: (m) => internalIPs(m.status?.addresses),
    },
  });
  const reconciler = new NodelinkReconciler(mgr);
  mgr
    .controller(NODELINK_CONTROLLER)
    .for(kinds.Node, { predicates: [nodeRelevant] })
    // A Machine that gets its providerID or addresses, labels or taints wakes its Node.
    .watches(
      mapoKinds.Machine,
      (m) => {
        if (m.metadata?.deletionTimestamp) return [];
        const node = findOne(
          m.spec?.providerID ? nodes.byIndex(NODE_BY_PROVIDER_ID, m.spec.providerID) : [],
          internalIPs(m.status?.addresses).flatMap((ip) => nodes.byIndex(NODE_BY_INTERNAL_IP, ip)),
        );
        return node.one?.metadata?.name ? [{ name: node.one.metadata.name }] : [];
      },
      { predicates: [machineRelevant] },
    )
    .withOptions({ maxConcurrentReconciles: opts.workers ?? 1 })
    .complete((req, signal, ctx) => reconciler.reconcile(req, signal, ctx));
}

/** Node changes nodelink acts on: identity, addresses, readiness, deletion, and what it writes. */
const nodeRelevant = fieldsChanged<V1Node>((n) => [
  n.spec?.providerID,
  internalIPs(n.status?.addresses),
  isNodeReady(n),
  n.metadata?.deletionTimestamp ?? null,
  n.metadata?.labels ?? {},
  n.metadata?.annotations?.[Annotations.Machine] ?? null,
  n.spec?.taints ?? [],
]);

const machineRelevant = fieldsChanged<Machine>((m) => [
  m.spec?.providerID,
  internalIPs(m.status?.addresses),
  m.spec?.metadata?.labels ?? {},
  m.spec?.taints ?? [],
  m.status?.nodeRef ?? null,
  m.metadata?.deletionTimestamp ?? null,
]);

/** By providerID first; by InternalIP only when no providerID matches. More than one is ambiguous. */
function findOne<T extends { metadata?: { name?: string; namespace?: string } }>(
  byProviderID: readonly T[],
  byIP: readonly T[],
): { one?: T; ambiguous?: readonly T[] } {
  for (const found of [byProviderID, dedupe(byIP)]) {
    if (found.length > 1) return { ambiguous: found };
    if (found.length === 1) return { one: found[0] };
  }
  return {};
}

function dedupe<T extends { metadata?: { name?: string; namespace?: string } }>(list: readonly T[]): T[] {
  const seen = new Map<string, T>();
  for (const o of list) seen.set(`${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`, o);
  return [...seen.values()];
}

/** A Node's Machine names two objects (a misconfiguration upstream also refuses). */
export class AmbiguousMachineError extends Error {
  override readonly name = 'AmbiguousMachineError';
  readonly node: string;
  readonly machines: readonly string[];

  constructor(node: string, machines: readonly string[]) {
    super(`Node ${node} matches ${machines.length} Machines (${machines.join(', ')}): expected 1`);
    this.node = node;
    this.machines = machines;
  }
}

export class NodelinkReconciler {
  private readonly mgr: Manager;
  /** The readiness last written per Node (upstream's nodeReadinessCache). */
  private readonly readiness = new Map<string, boolean>();

  constructor(mgr: Manager) {
    this.mgr = mgr;
  }

  async reconcile(req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    const node = await this.mgr.client.get(kinds.Node, req, { signal });
    if (!node) {
      this.readiness.delete(req.name);
      return {};
    }
    const machine = await this.machineOf(node, signal);
    if (!machine) {
      ctx.log.debug('no Machine for this Node');
      return {};
    }
    try {
      await this.linkMachine(machine, node, signal, ctx);
      if (node.metadata?.deletionTimestamp) return {};
      await this.updateNode(node, machine, signal, ctx);
    } catch (err) {
      // The Node or Machine went meanwhile: its own event says what to do.
      if (isNotFound(err)) return {};
      throw err;
    }
    return {};
  }

  private async machineOf(node: V1Node, signal: AbortSignal): Promise<Machine | undefined> {
    const list = (name: string, value: string) =>
      this.mgr.client.list(mapoKinds.Machine, { index: { name, value }, signal });
    const byProviderID = node.spec?.providerID
      ? await list(MACHINE_BY_PROVIDER_ID, node.spec.providerID)
      : [];
    const byIP: Machine[] = [];
    if (byProviderID.length === 0) {
      for (const ip of internalIPs(node.status?.addresses))
        byIP.push(...(await list(MACHINE_BY_INTERNAL_IP, ip)));
    }
    const found = findOne(byProviderID, byIP);
    if (found.ambiguous) {
      throw new AmbiguousMachineError(
        node.metadata?.name ?? '',
        found.ambiguous.map((m) => `${m.metadata?.namespace ?? ''}/${m.metadata?.name ?? ''}`),
      );
    }
    return found.one;
  }

  private async linkMachine(
    machine: Machine,
    node: V1Node,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<void> {
    const name = node.metadata?.name ?? '';
    const draft = clone(machine);
    draft.status ??= {};
    if (node.metadata?.deletionTimestamp) {
      this.readiness.delete(name);
      if (!machine.status?.nodeRef) return;
      delete draft.status.nodeRef;
    } else {
      const ready = isNodeReady(node);
      const ref = machine.status?.nodeRef;
      const linked = ref?.name === name && ref.uid === node.metadata?.uid;
      if (linked && this.readiness.get(name) === ready) return;
      draft.status.nodeRef = {
        kind: 'Node',
        name,
        ...(node.metadata?.uid ? { uid: node.metadata.uid } : {}),
      };
      this.readiness.set(name, ready);
    }
    draft.status.lastUpdated = metaTime(this.mgr.clock.now());
    await patchStatus(this.mgr.api, mapoKinds.Machine, machine, draft, { signal });
    ctx.log.info(
      { machine: `${machine.metadata?.namespace ?? ''}/${machine.metadata?.name ?? ''}` },
      draft.status.nodeRef ? 'Machine linked to its Node' : 'Node deleting: nodeRef cleared',
    );
  }

  private async updateNode(
    node: V1Node,
    machine: Machine,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<void> {
    const draft = clone(node);
    draft.metadata = {
      ...draft.metadata,
      annotations: {
        ...draft.metadata?.annotations,
        [Annotations.Machine]: `${machine.metadata?.namespace ?? ''}/${machine.metadata?.name ?? ''}`,
      },
      labels: { ...draft.metadata?.labels, ...machine.spec?.metadata?.labels },
    };
    const taints: V1Taint[] = [...(draft.spec?.taints ?? [])];
    for (const t of machine.spec?.taints ?? []) {
      if (taints.some((n) => n.key === t.key && n.effect === t.effect)) continue;
      taints.push({ ...t } as V1Taint);
    }
    if (taints.length > 0) draft.spec = { ...draft.spec, taints };
    const stored = await mergePatch(this.mgr.api, kinds.Node, node, draft, { signal, optimisticLock: true });
    if (stored !== node)
      ctx.log.info(
        { machine: machine.metadata?.name },
        'Node labelled, tainted and annotated from its Machine',
      );
  }
}
