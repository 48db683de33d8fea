/**
 * The kubelets of the demo's machines. No VM boots in the emulator, so this stands in for what a
 * kubelet started with `--cloud-provider=external` (or, for a cluster on the in-tree provider,
 * `openstack`: see `cloudProvider`) does once its server is up:
 *
 * - it registers a Node named after its host, with the taint
 *   `node.cloudprovider.kubernetes.io/uninitialized:NoSchedule` (the ccm's cloud-node controller
 *   removes it once it has set the providerID, addresses and labels), the addresses the kubelet
 *   knows itself (Hostname, InternalIP), a Ready condition, and the control-plane role label
 *   kubeadm adds on control-plane machines;
 * - it keeps heartbeating: the Node's Lease in kube-node-lease and the Ready condition's
 *   lastHeartbeatTime, every `heartbeatMs`; it stops once its server is gone (the ccm's node
 *   lifecycle controller then deletes the Node, as upstream does);
 * - it goes away with its machine: once the OpenStackMachine is being deleted, the Node is deleted
 *   (a drained node's kubelet stops, and Cluster API deletes the Node).
 *
 * It runs as a controller for OpenStackMachines: a machine's server is found through
 * `status.instanceID` (the OpenStackMachine's, else its OpenStackServer's), and what the VM knows
 * of itself (hostname, status, fixed IPs) comes from `host`, which plays the metadata service.
 * With `machineAPI`, also for OpenShift's Machine API Machines (machine.openshift.io), whose
 * server is the OpenStackServer of the Machine's name; their Node is deleted by the Machine API's
 * machine controller, so this kubelet only stops heartbeating once the Machine goes away.
 */
import type { V1Lease, V1Node, V1NodeCondition } from '@kubernetes/client-node';
import {
  isAlreadyExists,
  isNotFound,
  kinds,
  metaTime,
  microTime,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
} from '../kube/index.ts';
import {
  capoKinds,
  CONTROL_PLANE_LABEL,
  type Machine,
  type OpenStackMachine,
  type OpenStackServer,
} from '../capo/api/index.ts';
import { Labels, mapoKinds, type Machine as MachineAPIMachine } from '../mapo/api/index.ts';
import { TAINT_UNINITIALIZED } from '../ccm/node-spec.ts';
import type { EmulatedCloud } from '../sim/openstack/core/cloud.ts';

export const LABEL_CONTROL_PLANE_ROLE = 'node-role.kubernetes.io/control-plane';
/** The kubelet of an OpenShift 4.19 node (no Machine API field says it). */
const OPENSHIFT_KUBELET_VERSION = 'v1.32.4';
const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** What a VM knows about itself: its hostname, whether it runs, and its fixed IPs. */
export interface HostView {
  name: string;
  /** Nova's status: ACTIVE once booted. */
  status: string;
  addresses: string[];
}

export type HostLookup = (instanceID: string) => HostView | undefined;

/** What the emulator's metadata service would tell a VM of itself: its name, status and fixed IPs. */
export function emulatedHosts(cloud: EmulatedCloud): HostLookup {
  return (instanceID) => {
    const server = cloud.compute.getServer(instanceID);
    if (!server) return undefined;
    const addresses = cloud.network
      .portsByDevice(instanceID)
      .flatMap((p) => p.fixed_ips.map((f) => f.ip_address));
    return { name: server.name, status: server.status, addresses };
  };
}

export interface KubeletOptions {
  host: HostLookup;
  /** kubelet's node status and lease renewal period (10 s), scaled with the cloud. */
  heartbeatMs: number;
  /** How often a machine whose server is not ACTIVE yet is looked at again. */
  pollMs: number;
  /**
   * The kubelet's `--cloud-provider`. `external` (the default): the ccm initializes the Node.
   * `openstack`, the in-tree provider before 1.26: the kubelet sets the providerID and the
   * addresses itself, with no uninitialized taint, as the clusters a migration starts from have them.
   */
  cloudProvider?: 'external' | 'openstack';
  /** Also run the kubelets of Machine API Machines (needs the machine.openshift.io CRDs). */
  machineAPI?: boolean;
}

export const KUBELET_CONTROLLER = 'demo-kubelet';
export const MACHINE_API_KUBELET_CONTROLLER = 'demo-kubelet-machine-api';

/** A machine as its kubelet sees it, from either API. */
interface MachineView {
  deleting: boolean;
  instanceID: string | undefined;
  controlPlane: boolean;
  version(signal: AbortSignal): Promise<string>;
}

const sameName = (s: OpenStackServer) =>
  s.metadata?.name ? [{ namespace: s.metadata.namespace, name: s.metadata.name }] : [];

export function registerKubelets(mgr: Manager, opts: KubeletOptions): Kubelets {
  const k = new Kubelets(mgr, opts);
  mgr
    .controller(KUBELET_CONTROLLER)
    .for(capoKinds.OpenStackMachine)
    // The instance ID may reach the OpenStackServer's status before the machine's.
    .watches(capoKinds.OpenStackServer, sameName)
    .withOptions({ maxConcurrentReconciles: 4 })
    .complete((req, signal, ctx) => k.reconcile(req, signal, ctx));
  if (opts.machineAPI) {
    mgr
      .controller(MACHINE_API_KUBELET_CONTROLLER)
      .for(mapoKinds.Machine)
      .watches(capoKinds.OpenStackServer, sameName)
      .withOptions({ maxConcurrentReconciles: 4 })
      .complete((req, signal, ctx) => k.reconcileMachineAPI(req, signal, ctx));
  }
  return k;
}

export class Kubelets {
  private readonly mgr: Manager;
  private readonly opts: KubeletOptions;
  /** Node name per machine key: a machine already gone still names the Node to delete. */
  private readonly nodes = new Map<string, string>();
  private readonly beats = new Map<string, number>();

  private cloudProvider: 'external' | 'openstack';

  constructor(mgr: Manager, opts: KubeletOptions) {
    this.mgr = mgr;
    this.opts = opts;
    this.cloudProvider = opts.cloudProvider ?? 'external';
  }

  /** The kubelets restarted with another `--cloud-provider`: Nodes registered from now on follow it. */
  setCloudProvider(provider: 'external' | 'openstack'): void {
    this.cloudProvider = provider;
  }

  /** A Cluster API machine (its OpenStackMachine). */
  async reconcile(req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    const osm = await this.mgr.client.get(capoKinds.OpenStackMachine, req, { signal });
    const view: MachineView | undefined = osm && {
      deleting: Boolean(osm.metadata?.deletionTimestamp),
      instanceID: osm.status?.instanceID ?? (await this.serverInstanceID(req, signal)),
      controlPlane: osm.metadata?.labels?.[CONTROL_PLANE_LABEL] !== undefined,
      version: (s) => this.kubeletVersion(osm, s),
    };
    // Cluster API deletes a machine's Node when the machine goes: here, its kubelet does.
    return this.sync(
      `cluster-api/${req.namespace ?? ''}/${req.name}`,
      view,
      { deletesNode: true },
      signal,
      ctx,
    );
  }

  /** A Machine API Machine: its server is the OpenStackServer of its name. */
  async reconcileMachineAPI(req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    const m = await this.mgr.client.get<MachineAPIMachine>(mapoKinds.Machine, req, { signal });
    const view: MachineView | undefined = m && {
      deleting: Boolean(m.metadata?.deletionTimestamp),
      instanceID: await this.serverInstanceID(req, signal),
      controlPlane: m.metadata?.labels?.[Labels.MachineRole] === 'master',
      version: () => Promise.resolve(OPENSHIFT_KUBELET_VERSION),
    };
    // The Machine API's machine controller deletes the Node itself, whether or not this kubelet
    // saw the Machine deleting before it was gone (and after a switch to Cluster API the Node
    // is the Cluster API Machine's).
    return this.sync(
      `machine-api/${req.namespace ?? ''}/${req.name}`,
      view,
      { deletesNode: false },
      signal,
      ctx,
    );
  }

  private async sync(
    key: string,
    machine: MachineView | undefined,
    api: { deletesNode: boolean },
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Result> {
    if (!machine || machine.deleting) {
      const name = this.nodes.get(key);
      if (name) {
        if (api.deletesNode) {
          await this.deleteNode(name, signal);
          ctx.log.info({ node: name }, 'machine going away: node deleted');
        }
        this.nodes.delete(key);
        this.beats.delete(name);
      }
      return {};
    }
    const instanceID = machine.instanceID;
    const host = instanceID ? this.opts.host(instanceID) : undefined;
    const known = this.nodes.get(key);
    if (!host || !instanceID) {
      // The server is gone (or not created yet): a kubelet on it is not running, so no heartbeat.
      return { requeueAfterMs: this.opts.pollMs };
    }
    if (host.status !== 'ACTIVE') return { requeueAfterMs: known ? this.opts.heartbeatMs : this.opts.pollMs };

    const node = await this.mgr.client.get(kinds.Node, { name: host.name }, { signal });
    if (!node) {
      await this.register(machine, instanceID, host, signal);
      this.nodes.set(key, host.name);
      this.beats.set(host.name, Date.now());
      ctx.log.info({ node: host.name, instanceID }, 'server ACTIVE: node registered');
      return { requeueAfterMs: this.opts.heartbeatMs };
    }
    this.nodes.set(key, host.name);
    const last = this.beats.get(host.name) ?? 0;
    const due = last + this.opts.heartbeatMs - Date.now();
    if (due > 0) return { requeueAfterMs: due };
    await this.heartbeat(node, signal);
    this.beats.set(host.name, Date.now());
    return { requeueAfterMs: this.opts.heartbeatMs };
  }

  private async serverInstanceID(req: Request, signal: AbortSignal): Promise<string | undefined> {
    const oss = await this.mgr.client.get<OpenStackServer>(capoKinds.OpenStackServer, req, { signal });
    return oss?.status?.instanceID ?? undefined;
  }

  private async register(
    machine: MachineView,
    instanceID: string,
    host: HostView,
    signal: AbortSignal,
  ): Promise<void> {
    const now = metaTime(Date.now());
    const inTree = this.cloudProvider === 'openstack';
    const controlPlane = machine.controlPlane;
    const version = await machine.version(signal);
    const node: V1Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: host.name,
        labels: {
          'kubernetes.io/hostname': host.name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          'beta.kubernetes.io/os': 'linux',
          'beta.kubernetes.io/arch': 'amd64',
          ...(controlPlane ? { [LABEL_CONTROL_PLANE_ROLE]: '' } : {}),
        },
      },
      spec: inTree
        ? { providerID: `openstack:///${instanceID}` }
        : { taints: [{ key: TAINT_UNINITIALIZED, value: 'true', effect: 'NoSchedule' }] },
      status: {
        addresses: inTree
          ? [
              ...host.addresses.map((address) => ({ type: 'InternalIP', address })),
              { type: 'Hostname', address: host.name },
            ]
          : [
              { type: 'Hostname', address: host.name },
              ...host.addresses.slice(0, 1).map((address) => ({ type: 'InternalIP', address })),
            ],
        conditions: [readyCondition(now, now)],
        nodeInfo: {
          kubeletVersion: version,
          kubeProxyVersion: version,
          operatingSystem: 'linux',
          architecture: 'amd64',
          osImage: 'Ubuntu 22.04 LTS',
          kernelVersion: '5.15.0-shiftstack',
          containerRuntimeVersion: 'containerd://1.7.0',
          machineID: '',
          systemUUID: '',
          bootID: '',
        },
      },
    };
    let created: V1Node;
    try {
      created = await this.mgr.api.create(kinds.Node, node, { signal });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      return;
    }
    await this.renewLease(created, signal);
  }

  /** The Machine's `spec.version`, as kubeadm would have installed it. */
  private async kubeletVersion(osm: OpenStackMachine, signal: AbortSignal): Promise<string> {
    const owner = osm.metadata?.ownerReferences?.find((r) => r.kind === 'Machine');
    if (!owner) return 'v0.0.0-unknown';
    try {
      const m = await this.mgr.api.get<Machine>(
        capoKinds.Machine,
        { namespace: osm.metadata?.namespace, name: owner.name },
        { signal },
      );
      return m.spec.version ?? 'v0.0.0-unknown';
    } catch (err) {
      if (isNotFound(err)) return 'v0.0.0-unknown';
      throw err;
    }
  }

  private async heartbeat(node: V1Node, signal: AbortSignal): Promise<void> {
    const now = metaTime(Date.now());
    const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
    const since = ready?.status === 'True' ? (ready.lastTransitionTime as unknown as string) : now;
    // A strategic merge keyed by condition type: the addresses the ccm set are left alone.
    await this.mgr.api.patch(
      kinds.Node,
      { name: node.metadata?.name ?? '' },
      'strategic',
      { status: { conditions: [readyCondition(now, since)] } },
      { subresource: 'status', signal },
    );
    await this.renewLease(node, signal);
  }

  private async renewLease(node: V1Node, signal: AbortSignal): Promise<void> {
    const name = node.metadata?.name ?? '';
    const now = microTime(Date.now());
    const lease: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name,
        namespace: NODE_LEASE_NAMESPACE,
        // As kubelet does: the Lease goes with its Node.
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata?.uid ?? '' }],
      },
      spec: {
        holderIdentity: name,
        leaseDurationSeconds: 40,
        renewTime: now as unknown as Date,
      },
    };
    try {
      await this.mgr.api.patch(
        kinds.Lease,
        { namespace: NODE_LEASE_NAMESPACE, name },
        'merge',
        { spec: { renewTime: now } },
        { signal },
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await this.mgr.api.create(kinds.Lease, lease, { signal }).catch((e: unknown) => {
        if (!isAlreadyExists(e)) throw e;
      });
    }
  }

  private async deleteNode(name: string, signal: AbortSignal): Promise<void> {
    try {
      await this.mgr.api.delete(kinds.Node, { name }, { signal });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

function readyCondition(heartbeat: string, transition: string): V1NodeCondition {
  return {
    type: 'Ready',
    status: 'True',
    reason: 'KubeletReady',
    message: 'kubelet is posting ready status',
    lastHeartbeatTime: heartbeat as unknown as Date,
    lastTransitionTime: transition as unknown as Date,
  };
}
