/**
 * Migration both ways between kube-controller-manager's in-tree provider (the stand-in) and
 * `shiftstack ccm`, with KEP-2436 leader migration on both, as upstream's guide runs it: both sides
 * enable migration, then kube-controller-manager restarts with `--cloud-provider=external` (and the
 * downgrade: back to `openstack`, then the CCM goes). Services and Nodes change all along, and the
 * judge is what happened, watched as it happened (testing/observe.ts):
 *
 * - every OpenStack write was made by the holder of the migration Lease at that moment (the
 *   emulator's journal attributes each to its maker's User-Agent);
 * - one load balancer per Service, with the same id, VIP and floating IP across the handover;
 * - no Service that had an external address was ever seen without it, no Node's addresses changed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Service } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { Annotation } from '../../ccm/service/annotations.ts';
import { startCcmEnv, type CcmEnv, type RoutedSubnet, type RunningCcm } from '../../ccm/testing/env.ts';
import { bootServer, registerInTreeNode, startInTreeKcm, type RunningKcm } from './testing/env.ts';
import { ClusterObserver, cloudWrites, turnsOf, writesOutOfTurn } from './testing/observe.ts';
import { ONLY_TCP } from './load-balancer.ts';

const MIGRATION_LEASE = 'cloud-provider-extraction-migration';
const KCM_UA = 'shiftstack-kube-controller-manager';
const CCM_UA = 'shiftstack-ccm';
/** Short leases: a handover is a release, not an expiry, but a lost renewal must not end a test. */
const LEASES = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 100 };
const wait = { timeoutMs: 60_000, intervalMs: 30 };
const until = <T>(fn: () => Promise<T | undefined | false>, what: string) =>
  eventually(fn, { ...wait, what }) as Promise<T>;

describe('migration between the in-tree provider and shiftstack ccm, with leader migration', () => {
  let env: CcmEnv;
  let net: RoutedSubnet;
  let conf: string;
  let observer: ClusterObserver;
  /** Leader identity → the User-Agent its OpenStack calls carry. */
  const callerOf = new Map<string, string>();
  const running: { stop(): Promise<void> }[] = [];

  before(async () => {
    env = await startCcmEnv();
    net = await env.routedSubnet('10.50.0.0/16');
    for (const name of ['worker-1', 'worker-2'])
      await registerInTreeNode(env, await bootServer(env, name, net.network.id));
    conf = await env.cloudConf(
      `[LoadBalancer]\nsubnet-id = ${net.subnet.id}\nfloating-network-id = ${net.publicNetwork.id}\n`,
    );
    observer = await ClusterObserver.start(env.api);
  });
  after(async () => {
    await observer?.stop();
    for (const r of running.splice(0).reverse()) await r.stop().catch(() => undefined);
    await env?.close();
  });

  async function kcm(cloudProvider: 'openstack' | 'external', ua = KCM_UA): Promise<RunningKcm> {
    const k = await startInTreeKcm(env, {
      cloudConfig: conf,
      cloudProvider,
      leaderElect: true,
      ...LEASES,
      enableLeaderMigration: cloudProvider === 'openstack',
      ...(ua === KCM_UA ? {} : { userAgent: [ua.replace(` ${KCM_UA}`, '')] }),
    });
    callerOf.set(k.identity!, ua);
    running.push(k);
    return k;
  }
  async function ccm(ua = CCM_UA): Promise<RunningCcm> {
    const c = await env.startCcm({
      cloudConfig: conf,
      leaderElect: true,
      ...LEASES,
      enableLeaderMigration: true,
      controllers: ['*'],
      ...(ua === CCM_UA ? {} : { userAgent: [ua.replace(` ${CCM_UA}`, '')] }),
    });
    callerOf.set(c.ccm.manager.identity!, ua);
    running.push(c);
    return c;
  }
  async function stop(r: { stop(): Promise<void> }): Promise<void> {
    running.splice(running.indexOf(r), 1);
    await r.stop();
  }
  const holder = async (lease: string) =>
    (await env.api.get(kinds.Lease, { namespace: 'kube-system', name: lease }).catch(() => undefined))?.spec
      ?.holderIdentity || undefined;

  const get = (name: string) => env.api.get(kinds.Service, { namespace: 'default', name });
  function service(name: string, protocol = 'TCP', port = 80): Promise<V1Service> {
    return env.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: 'default' },
      spec: { type: 'LoadBalancer', selector: { app: name }, ports: [{ protocol, port }] },
    });
  }
  const served = (name: string) =>
    until(async () => (await get(name)).status?.loadBalancer?.ingress?.[0]?.ip, `${name} has an address`);
  const lbName = (s: V1Service) => `a${s.metadata!.uid!.replaceAll('-', '')}`.slice(0, 32);

  /** Every load balancer in the project, by id → name. */
  async function loadBalancers(): Promise<Map<string, string>> {
    const all = await env.os.loadBalancer.loadBalancers.list().all();
    return new Map(all.map((lb) => [lb.id, lb.name]));
  }
  /** Waits until every listed Service's load balancer has exactly the Nodes as members, on `port`. */
  async function converged(names: readonly string[], ports: Record<string, number> = {}): Promise<void> {
    await until(
      async () => {
        const nodes = (await env.api.list(kinds.Node)).items.map((n) => n.metadata!.name!).sort();
        for (const name of names) {
          const svc = await get(name);
          const id = svc.metadata?.annotations?.[Annotation.LoadBalancerId];
          const [lb] = id
            ? [await env.os.loadBalancer.loadBalancers.get(id).catch(() => undefined)]
            : await env.os.loadBalancer.loadBalancers.list({ name: lbName(svc) }).all();
          if (!lb || lb.provisioning_status !== 'ACTIVE') return false;
          const listeners = await env.os.loadBalancer.listeners.list({ loadbalancer_id: lb.id }).all();
          if (listeners.map((l) => l.protocol_port).join() !== String(ports[name] ?? 80)) return false;
          for (const pool of await env.os.loadBalancer.pools.list({ loadbalancer_id: lb.id }).all()) {
            const members = await env.os.loadBalancer.members.list(pool.id).all();
            const addresses = members.map((m) => m.address).sort();
            const want = (await env.api.list(kinds.Node)).items
              .map((n) => n.status!.addresses!.find((a) => a.type === 'InternalIP')!.address)
              .sort();
            if (addresses.join() !== want.join() || nodes.length !== want.length) return false;
          }
        }
        return true;
      },
      `${names.join(', ')} match their spec and the Nodes`,
    );
  }
  /** What the Services' addresses and load balancers are now: must not change across a handover. */
  async function identities(names: readonly string[]): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const name of names) {
      const svc = await get(name);
      const ip = svc.status?.loadBalancer?.ingress?.[0]?.ip;
      const id =
        svc.metadata?.annotations?.[Annotation.LoadBalancerId] ??
        (await env.os.loadBalancer.loadBalancers.list({ name: lbName(svc) }).all())[0]?.id;
      const lb = id ? await env.os.loadBalancer.loadBalancers.get(id) : undefined;
      out[name] = `${id} vip=${lb?.vip_address} ip=${ip}`;
    }
    return out;
  }
  function assertOnlyInTurn(since: number, what: string): void {
    const writes = cloudWrites(env.sim.cloud.stats, since, [...new Set(callerOf.values())]);
    assert.ok(writes.length > 0, `${what}: the test made both sides write`);
    const out = writesOutOfTurn(writes, turnsOf(observer, MIGRATION_LEASE), callerOf);
    assert.deepEqual(
      out.map((w) => `${w.caller} ${w.service} ${w.operation}`),
      [],
      `${what}: writes by a side that did not hold the migration Lease`,
    );
  }
  async function assertOneLoadBalancerEach(names: readonly string[]): Promise<void> {
    const lbs = await loadBalancers();
    assert.equal(lbs.size, names.length, `one load balancer per Service: ${[...lbs.values()].join(', ')}`);
  }
  function assertNothingFlapped(): void {
    assert.deepEqual(observer.lostAddresses, [], 'a Service lost or changed its external address');
    assert.deepEqual(observer.flaps, [], "a Node's addresses changed");
  }

  let inTree: RunningKcm;
  let cloud: RunningCcm;

  it('upgrade: the CCM adopts the in-tree load balancers (same id, VIP, floating IP) and takes the loops, never both acting', async () => {
    const since = env.sim.cloud.stats.requests().last;
    inTree = await kcm('openstack');
    for (const name of ['s1', 's2', 's3']) await service(name);
    await service('dns', 'UDP', 53);
    for (const name of ['s1', 's2', 's3']) await served(name);
    // The in-tree provider could not serve UDP.
    await until(async () => {
      const events = await env.api.list(kinds.EventsV1Event, { namespace: 'default' });
      return events.items.some((e) => e.regarding?.name === 'dns' && e.note?.includes(ONLY_TCP));
    }, 'the in-tree refusal of dns');

    // The CCM with migration on: its own Lease, then it waits for the migration Lease.
    cloud = await ccm();
    await until(
      async () => (await holder('cloud-controller-manager')) === cloud.ccm.manager.identity,
      'the CCM leads its own Lease',
    );
    assert.equal(await holder(MIGRATION_LEASE), inTree.identity);
    // Changes while the in-tree side still owns the loops: a Service and a Node.
    await service('s4');
    await registerInTreeNode(env, await bootServer(env, 'worker-3', net.network.id));
    await served('s4');
    await converged(['s1', 's2', 's3', 's4']);
    const before = await identities(['s1', 's2', 's3', 's4']);

    // kube-controller-manager restarts with --cloud-provider=external: the CCM takes over.
    await stop(inTree);
    inTree = await kcm('external');
    await service('s5');
    await env.api.patch(kinds.Service, { namespace: 'default', name: 's2' }, 'merge', {
      spec: { ports: [{ protocol: 'TCP', port: 8080 }] },
    });
    await env.api.delete(kinds.Node, { name: 'worker-1' });
    await served('s5');
    await served('dns');
    await converged(['s1', 's2', 's3', 's4', 's5'], { s2: 8080 });
    for (const name of ['s1', 's2', 's3', 's4']) {
      await until(
        async () => (await get(name)).metadata?.annotations?.[Annotation.LoadBalancerId],
        `${name} adopted`,
      );
    }

    const after = await identities(['s1', 's2', 's3', 's4']);
    assert.deepEqual(after, before, 'the same load balancers, VIPs and floating IPs');
    await assertOneLoadBalancerEach(['s1', 's2', 's3', 's4', 's5', 'dns']);
    assertNothingFlapped();
    assertOnlyInTurn(since, 'upgrade');
    assert.equal(await holder(MIGRATION_LEASE), cloud.ccm.manager.identity);
    assert.deepEqual(
      observer
        .holdersOf(MIGRATION_LEASE)
        .map((h) => callerOf.get(h))
        .slice(-2),
      [KCM_UA, CCM_UA],
    );
  });

  it('downgrade: the in-tree provider finds the load balancers again (its own by name, the CCM’s by the recorded id) and takes the loops back', async () => {
    const since = env.sim.cloud.stats.requests().last;
    // The UDP Service cannot go back; its owner removes it first.
    await env.api.delete(kinds.Service, { namespace: 'default', name: 'dns' });
    await until(async () => !(await get('dns').catch(() => undefined)), 'dns gone');
    // kube-controller-manager back to the in-tree provider, migration on: it waits for the Lease.
    await stop(inTree);
    inTree = await kcm('openstack');
    await until(
      async () => (await holder('kube-controller-manager')) === inTree.identity,
      'kube-controller-manager leads its own Lease',
    );
    await service('s6');
    await served('s6');
    const before = await identities(['s1', 's2', 's3', 's4', 's5', 's6']);
    assert.equal(await holder(MIGRATION_LEASE), cloud.ccm.manager.identity);

    // The CCM goes: kube-controller-manager takes the loops back.
    await stop(cloud);
    await env.api.patch(kinds.Service, { namespace: 'default', name: 's5' }, 'merge', {
      spec: { ports: [{ protocol: 'TCP', port: 8443 }] },
    });
    await env.api.delete(kinds.Service, { namespace: 'default', name: 's3' });
    await registerInTreeNode(env, await bootServer(env, 'worker-4', net.network.id));
    await until(
      async () => (await holder(MIGRATION_LEASE)) === inTree.identity,
      'kube-controller-manager holds the migration Lease',
    );
    await until(async () => !(await get('s3').catch(() => undefined)), 's3 gone');
    await converged(['s1', 's2', 's4', 's5', 's6'], { s2: 8080, s5: 8443 });

    const { s3: _gone, ...kept } = before;
    assert.deepEqual(await identities(['s1', 's2', 's4', 's5', 's6']), kept);
    await assertOneLoadBalancerEach(['s1', 's2', 's4', 's5', 's6']);
    assertNothingFlapped();
    assertOnlyInTurn(since, 'downgrade');
    assert.deepEqual(
      observer
        .holdersOf(MIGRATION_LEASE)
        .map((h) => callerOf.get(h))
        .slice(-2),
      [CCM_UA, KCM_UA],
    );
  });
});
