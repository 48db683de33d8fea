/**
 * A cluster to migrate: both emulators, Nodes registered in-tree on a routed subnet, one cloud.conf
 * for both sides, an observer (observe.ts), and replicas of either side with leader election and
 * migration started on demand, each with its own User-Agent so the journal names the replica that
 * made a call. The migration tests and `bench:migration` drive it.
 */
import type { V1Service } from '@kubernetes/client-node';
import { kinds } from '../../../kube/index.ts';
import { eventually } from '../../../sim/openstack/testing/harness.ts';
import { Annotation } from '../../../ccm/service/annotations.ts';
import { startCcmEnv, type CcmEnv, type RoutedSubnet, type RunningCcm } from '../../../ccm/testing/env.ts';
import type { CloudOptions } from '../../../sim/openstack/index.ts';
import type { InTreeKcmOptions } from '../kcm.ts';
import { bootServer, registerInTreeNode, startInTreeKcm, type RunningKcm } from './env.ts';
import { ClusterObserver, cloudWrites, turnsOf, writesOutOfTurn } from './observe.ts';
import type { RequestRecord } from '../../../sim/openstack/core/stats.ts';

export const MIGRATION_LEASE = 'cloud-provider-extraction-migration';
export const KCM_UA = 'shiftstack-kube-controller-manager';
export const CCM_UA = 'shiftstack-ccm';
/** Short leases: a handover is a release, not an expiry, but a slow renewal must not end a run. */
export const LEASES = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 100 };

export interface BedOptions {
  nodes?: number;
  cloud?: CloudOptions;
  /** In-tree waits × this (the stand-in's --time-scale). */
  timeScale?: number;
  waitMs?: number;
}

export class MigrationBed {
  readonly env: CcmEnv;
  readonly net: RoutedSubnet;
  readonly conf: string;
  readonly observer: ClusterObserver;
  /** Leader identity → the User-Agent of its OpenStack calls. */
  readonly callerOf = new Map<string, string>();
  private readonly running: { stop(): Promise<void> }[] = [];
  private readonly opts: BedOptions;
  private nodes = 0;

  private constructor(
    env: CcmEnv,
    net: RoutedSubnet,
    conf: string,
    observer: ClusterObserver,
    opts: BedOptions,
  ) {
    this.env = env;
    this.net = net;
    this.conf = conf;
    this.observer = observer;
    this.opts = opts;
  }

  static async start(opts: BedOptions = {}): Promise<MigrationBed> {
    const env = await startCcmEnv(opts.cloud);
    try {
      const net = await env.routedSubnet('10.50.0.0/16');
      const conf = await env.cloudConf(
        `[LoadBalancer]\nsubnet-id = ${net.subnet.id}\nfloating-network-id = ${net.publicNetwork.id}\n`,
      );
      const observer = await ClusterObserver.start(env.api);
      const bed = new MigrationBed(env, net, conf, observer, opts);
      for (let i = 0; i < (opts.nodes ?? 2); i++) await bed.addNode();
      return bed;
    } catch (err) {
      await env.close();
      throw err;
    }
  }

  /** A new server and its Node, as an in-tree kubelet registers it; returns the Node's name. */
  async addNode(): Promise<string> {
    const name = `worker-${++this.nodes}`;
    await registerInTreeNode(this.env, await bootServer(this.env, name, this.net.network.id));
    return name;
  }

  /** A kube-controller-manager replica: in-tree with migration on, or external (no migration). */
  async kcm(
    cloudProvider: 'openstack' | 'external',
    replica = '',
    extra: Partial<InTreeKcmOptions> = {},
  ): Promise<RunningKcm> {
    const k = await startInTreeKcm(this.env, {
      cloudConfig: this.conf,
      cloudProvider,
      leaderElect: true,
      ...LEASES,
      enableLeaderMigration: cloudProvider === 'openstack',
      timeScale: this.opts.timeScale ?? 0.01,
      ...(replica ? { userAgent: [replica] } : {}),
      ...extra,
    });
    this.callerOf.set(k.identity!, replica ? `${replica} ${KCM_UA}` : KCM_UA);
    this.running.push(k);
    return k;
  }

  /** A `shiftstack ccm` replica with leader migration. */
  async ccm(replica = '', deps: Parameters<CcmEnv['startCcm']>[2] = {}): Promise<RunningCcm> {
    const c = await this.env.startCcm(
      {
        cloudConfig: this.conf,
        leaderElect: true,
        ...LEASES,
        enableLeaderMigration: true,
        ...(replica ? { userAgent: [replica] } : {}),
      },
      {},
      deps,
    );
    this.callerOf.set(c.ccm.manager.identity!, replica ? `${replica} ${CCM_UA}` : CCM_UA);
    this.running.push(c);
    return c;
  }

  /** Stops a replica gracefully (its work ends, then its Leases are released). */
  async stop(r: { stop(): Promise<void> }): Promise<void> {
    const i = this.running.indexOf(r);
    if (i >= 0) this.running.splice(i, 1);
    await r.stop();
  }

  async holder(lease: string): Promise<string | undefined> {
    const l = await this.env.api
      .get(kinds.Lease, { namespace: 'kube-system', name: lease })
      .catch(() => undefined);
    return l?.spec?.holderIdentity || undefined;
  }

  until<T>(fn: () => Promise<T | undefined | false>, what: string): Promise<T> {
    return eventually(fn, { timeoutMs: this.opts.waitMs ?? 60_000, intervalMs: 30, what }) as Promise<T>;
  }

  get(name: string): Promise<V1Service> {
    return this.env.api.get(kinds.Service, { namespace: 'default', name });
  }

  service(name: string, protocol = 'TCP', port = 80): Promise<V1Service> {
    return this.env.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: 'default' },
      spec: { type: 'LoadBalancer', selector: { app: name }, ports: [{ protocol, port }] },
    });
  }

  async setPort(name: string, port: number): Promise<void> {
    await this.env.api.patch(kinds.Service, { namespace: 'default', name }, 'merge', {
      spec: { ports: [{ protocol: 'TCP', port }] },
    });
  }

  async deleteService(name: string): Promise<void> {
    await this.env.api.delete(kinds.Service, { namespace: 'default', name });
    await this.until(async () => !(await this.get(name).catch(() => undefined)), `${name} gone`);
  }

  served(name: string): Promise<string> {
    return this.until(
      async () => (await this.get(name)).status?.loadBalancer?.ingress?.[0]?.ip,
      `${name} has an address`,
    );
  }

  /** The load balancer of a Service: by the id the CCM recorded, else by the in-tree name. */
  async loadBalancerOf(svc: V1Service) {
    const id = svc.metadata?.annotations?.[Annotation.LoadBalancerId];
    if (id) return this.env.os.loadBalancer.loadBalancers.get(id).catch(() => undefined);
    const legacy = `a${svc.metadata!.uid!.replaceAll('-', '')}`.slice(0, 32);
    return (await this.env.os.loadBalancer.loadBalancers.list({ name: legacy }).all())[0];
  }

  /** Waits until every listed Service's load balancer listens on its port with every Node as member. */
  async converged(names: readonly string[], ports: Record<string, number> = {}): Promise<void> {
    await this.until(
      async () => {
        const want = (await this.env.api.list(kinds.Node)).items
          .map((n) => n.status!.addresses!.find((a) => a.type === 'InternalIP')!.address)
          .sort()
          .join();
        for (const name of names) {
          const lb = await this.loadBalancerOf(await this.get(name));
          if (!lb || lb.provisioning_status !== 'ACTIVE') return false;
          const lbs = this.env.os.loadBalancer;
          const listeners = await lbs.listeners.list({ loadbalancer_id: lb.id }).all();
          if (listeners.map((l) => l.protocol_port).join() !== String(ports[name] ?? 80)) return false;
          for (const pool of await lbs.pools.list({ loadbalancer_id: lb.id }).all()) {
            const members = await lbs.members.list(pool.id).all();
            if (
              members
                .map((m) => m.address)
                .sort()
                .join() !== want
            )
              return false;
          }
        }
        return true;
      },
      `${names.join(', ')} match their spec and the Nodes`,
    );
  }

  /** Each Service's load balancer id, VIP and external address: what a handover must not change. */
  async identities(names: readonly string[]): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const name of names) {
      const svc = await this.get(name);
      const lb = await this.loadBalancerOf(svc);
      out[name] = `${lb?.id} vip=${lb?.vip_address} ip=${svc.status?.loadBalancer?.ingress?.[0]?.ip}`;
    }
    return out;
  }

  /** Every load balancer of the project, by name. */
  async loadBalancerNames(): Promise<string[]> {
    return (await this.env.os.loadBalancer.loadBalancers.list().all()).map((lb) => lb.name);
  }

  /** The journal's position now. */
  mark(): number {
    return this.env.sim.cloud.stats.requests().last;
  }

  /** Both sides' OpenStack writes since `since` (Keystone left out). */
  writes(since: number): RequestRecord[] {
    return cloudWrites(this.env.sim.cloud.stats, since, [...new Set(this.callerOf.values())]);
  }

  /** The writes since `since` made while their maker did not hold the migration Lease. */
  outOfTurn(since: number): RequestRecord[] {
    return writesOutOfTurn(this.writes(since), turnsOf(this.observer, MIGRATION_LEASE), this.callerOf);
  }

  /** The migration Lease's holders in order, as the User-Agents of their calls. */
  migrationHolders(): string[] {
    return this.observer.holdersOf(MIGRATION_LEASE).map((h) => this.callerOf.get(h) ?? h);
  }

  async close(): Promise<void> {
    await this.observer.stop();
    for (const r of this.running.splice(0).reverse()) await r.stop().catch(() => undefined);
    await this.env.close();
  }
}
