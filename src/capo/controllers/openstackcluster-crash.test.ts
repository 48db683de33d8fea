/**
 * Crash consistency of the OpenStackCluster controller: the controller is killed right after its
 * k-th OpenStack call (the call took effect; its answer, and everything the process would have sent
 * afterwards to OpenStack or Kubernetes, is lost: the CCM's kill switch cuts its network). A fresh
 * controller, remembering nothing but what the Kubernetes objects hold, converges.
 *
 * The cluster is examples/capo/cluster.yaml's (managed network, subnet and router, the managed
 * security groups with the example's calico rules, the API load balancer with its floating IP),
 * with the bastion disabled to keep each run short (CAPO_CRASH_BASTION=1 keeps it: about twice as
 * long).
 *
 * - Create: for every k-th write of a clean create, the restarted controller makes the cluster
 *   Ready with exactly what a clean create leaves (one network, one subnet, one router, each
 *   security group once, one load balancer, one floating IP), the ones its status records; deleting
 *   the cluster then leaves nothing.
 * - Delete: for every k-th write of a clean delete, the restarted controller finishes it and leaves
 *   nothing.
 *
 * How many reads come before a write depends on timing (polls of a load balancer in
 * PENDING_CREATE), so the switch cuts after the k-th write, whatever came before it.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { startKillSwitch, type KillSwitch } from '../../sim/testing/kill-switch.ts';
import { CENSUS_KINDS, leaks, takeCensus, type Census, type CensusKind } from '../../demo/census.ts';
import { isNotFound } from '../../kube/index.ts';
import { kubeconfigText, writeKubeconfig } from '../../sim/kube/kubeconfig.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { capoKinds, type Cluster, type OpenStackCluster } from '../api/index.ts';
import { startCapoEnv, type CapoEnv, type RunningCapo } from '../testing/env.ts';

const WAIT = { timeoutMs: 60_000, intervalMs: 20 };
const ROOT = join(import.meta.dirname, '..', '..', '..');
/** Every run reuses the name (each ends with the cluster deleted), so OpenStack names compare as they are. */
const NAME = 'crash';
const CREDS = 'crash-creds';
const READ = /^(GET|HEAD|OPTIONS) /;
/**
 * `CAPO_CRASH_BASTION=1` keeps the example's bastion (its OpenStackServer controller runs in the
 * same process, so the switch counts its writes too): a longer sweep.
 */
const BASTION = process.env.CAPO_CRASH_BASTION === '1';
const CONTROLLERS = BASTION ? ['openstackcluster', 'openstackserver'] : ['openstackcluster'];

/** What a person compares: names where OpenStack's are ours and deterministic, else one mark per object. */
const NAMED: ReadonlySet<CensusKind> = new Set([
  'networks',
  'subnets',
  'routers',
  'load balancers',
  'security groups',
  'ports',
]);

/** A port's name, or its owner without the address it happened to get; the VIP port without its LB's id. */
const portLabel = (label: string) => label.replace(/ \S+$/, '').replace(/^octavia-lb-.*/, 'octavia-lb');

type Shape = Partial<Record<CensusKind, string[]>>;

/** What `now` has beyond `baseline`, by kind, kinds with nothing left out. */
function shape(baseline: Census, now: Census): Shape {
  const out: Shape = {};
  for (const l of leaks(baseline, now))
    (out[l.kind] ??= []).push(!NAMED.has(l.kind) ? '·' : l.kind === 'ports' ? portLabel(l.label) : l.label);
  for (const k of CENSUS_KINDS) out[k]?.sort();
  return out;
}

describe('OpenStackCluster controller killed after any OpenStack write', () => {
  let env: CapoEnv;
  let baseline: Census;
  let example: { cluster: Cluster; osc: OpenStackCluster };
  let switches = 0;
  const dying: Promise<void>[] = [];
  /** Every switch, closed at the end even when a test failed before burying its controller. */
  const opened: KillSwitch[] = [];

  before(async () => {
    env = await startCapoEnv();
    if (BASTION) await env.os.compute.keypairs.create({ name: 'capo-demo' });
    baseline = await takeCensus(env.admin);
    const docs = parseAllDocuments(
      await readFile(join(ROOT, 'examples', 'capo', 'cluster.yaml'), 'utf8'),
    ).map((d) => d.toJSON() as { kind?: string });
    example = {
      cluster: docs.find((d) => d.kind === 'Cluster') as Cluster,
      osc: docs.find((d) => d.kind === 'OpenStackCluster') as OpenStackCluster,
    };
  });
  after(async () => {
    await Promise.all(opened.map((sw) => sw.close()));
    await Promise.all(dying);
    await env?.close();
  });

  const key = { namespace: 'capo-demo', name: NAME };

  async function get(): Promise<OpenStackCluster | undefined> {
    try {
      return await env.api.get(capoKinds.OpenStackCluster, key);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Ready, and with the bastion its address, which the API load balancer's listener then allows. */
  const ready = async () => {
    const o = await get();
    if (o?.status?.ready !== true || !o.spec.controlPlaneEndpoint?.host) return undefined;
    if (!BASTION) return o;
    const address = o.status.bastion?.floatingIP;
    const lbId = o.status.apiServerLoadBalancer?.id;
    if (o.status.bastion?.state !== 'ACTIVE' || !address || !lbId) return undefined;
    const lb = await env.admin.loadBalancer.loadBalancers.get(lbId);
    const [listener] = await env.admin.loadBalancer.listeners.list({ loadbalancer_id: lbId }).all();
    const settled = lb.provisioning_status === 'ACTIVE' && listener?.allowed_cidrs?.includes(`${address}/32`);
    return settled ? o : undefined;
  };

  /** The example's Cluster and OpenStackCluster: renamed, credentials CREDS, bastion per BASTION. */
  async function createCluster(): Promise<void> {
    const metadata = { name: NAME, namespace: env.namespace };
    await env.api.create(capoKinds.Cluster, {
      ...example.cluster,
      metadata,
      spec: {
        ...example.cluster.spec,
        infrastructureRef: { ...example.cluster.spec?.infrastructureRef, name: NAME },
      },
    });
    const { bastion, ...spec } = example.osc.spec;
    await env.api.create(capoKinds.OpenStackCluster, {
      ...example.osc,
      metadata: { ...metadata, labels: { 'cluster.x-k8s.io/cluster-name': NAME } },
      spec: {
        ...spec,
        identityRef: { ...spec.identityRef, name: CREDS },
        bastion: BASTION ? bastion : { enabled: false },
      },
    });
  }

  /** Asks for the OpenStackCluster's deletion; a controller finishes it (see `gone`). */
  async function requestDelete(): Promise<void> {
    await env.api.delete(capoKinds.OpenStackCluster, key);
  }

  /** Waits until the OpenStackCluster is gone, then deletes its Cluster for the next run. */
  async function gone(what: string): Promise<void> {
    await eventually(async () => (await get()) === undefined, { ...WAIT, what });
    await env.api.delete(capoKinds.Cluster, key).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
    await eventually(
      async () => {
        try {
          await env.api.get(capoKinds.Cluster, key);
          return false;
        } catch (err) {
          if (isNotFound(err)) return true;
          throw err;
        }
      },
      { ...WAIT, what: 'the Cluster gone' },
    );
  }

  /** A controller reaching both emulators directly; the Secret says so (a rotation, too). */
  async function healthy(): Promise<RunningCapo> {
    await env.identitySecret(CREDS);
    return env.startCapo({ controllers: CONTROLLERS });
  }

  /** A controller whose network dies right after its k-th OpenStack write (never: Infinity). */
  async function doomed(k: number): Promise<{ capo: RunningCapo; sw: KillSwitch }> {
    const sw = await startKillSwitch({
      cloudUrl: env.sim.url,
      kubeUrl: env.kube.url,
      after: Infinity,
      afterWrites: k,
    });
    opened.push(sw);
    const kubeconfig = join(env.dir, `kubeconfig-cluster-switch-${++switches}`);
    await writeKubeconfig(
      kubeconfig,
      kubeconfigText({ server: sw.kubeUrl, token: env.kube.token, caPem: env.kube.caPem }),
    );
    await env.identitySecret(CREDS, { authUrl: env.sim.authUrl.replace(env.sim.url, sw.cloudUrl) });
    const capo = await env.startCapo({ controllers: CONTROLLERS, kubeconfig });
    return { capo, sw };
  }

  /** The process is dead: its graceful stop only frees what it held here, so it runs in the background. */
  async function bury(d: { capo: RunningCapo; sw: KillSwitch }): Promise<void> {
    await d.sw.close();
    dying.push(d.capo.stop());
  }

  const writesOf = (sw: KillSwitch) => sw.forwarded.filter((c) => !READ.test(c));

  /**
   * One crash-and-restart run per write of the clean run. With the bastion two controllers write
   * concurrently, and a run may make fewer writes than the clean one (the other controller's
   * conflicts resolved differently): such a run is not killed, and says so.
   */
  async function sweep(
    t: TestContext,
    writes: number,
    run: (k: number) => Promise<{ writes: number; dead: boolean }>,
  ): Promise<void> {
    for (let k = 1; k <= writes; k++) {
      const r = await run(k);
      t.diagnostic(`write ${k}: ${r.dead ? `killed after ${r.writes} writes` : 'finished before it'}`);
      if (!BASTION) assert.ok(r.dead && r.writes === k, `the run for write ${k} was killed right after it`);
    }
  }

  /** Where the switch's cut fell; asserts nothing reached the cloud after it. */
  function cut(d: { sw: KillSwitch }, k: number, label: string): { writes: number; dead: boolean } {
    if (d.sw.dead) {
      assert.equal(d.sw.writes, k, `${label}: killed right after write ${k}`);
      assert.doesNotMatch(d.sw.forwarded.at(-1)!, READ, `${label}: the last call that reached the cloud`);
    }
    return { writes: d.sw.writes, dead: d.sw.dead };
  }

  /** Exactly what one clean create leaves, and the status names those very objects. */
  async function assertConverged(
    expected: { shape: Shape; rules: Record<string, string[]> },
    label: string,
  ): Promise<void> {
    const osc = (await eventually(ready, { ...WAIT, what: `${label}: Ready after restart` }))!;
    const now = await takeCensus(env.admin);
    assert.deepEqual(shape(baseline, now), expected.shape, `${label}: exactly what one clean create leaves`);
    const st = osc.status!;
    const ours = (kind: CensusKind) =>
      leaks(baseline, now)
        .filter((l) => l.kind === kind)
        .map((l) => l.id);
    assert.deepEqual(ours('networks'), [st.network!.id], `${label}: the recorded network`);
    assert.deepEqual(ours('subnets'), [st.network!.subnets![0]!.id], `${label}: the recorded subnet`);
    assert.deepEqual(ours('routers'), [st.router!.id], `${label}: the recorded router`);
    assert.deepEqual(
      ours('security groups').sort(),
      [st.controlPlaneSecurityGroup, st.workerSecurityGroup, ...(BASTION ? [st.bastionSecurityGroup] : [])]
        .map((g) => g!.id)
        .sort(),
      `${label}: the recorded security groups`,
    );
    assert.deepEqual(ours('load balancers'), [st.apiServerLoadBalancer!.id], `${label}: the recorded LB`);
    const [fip] = await env.admin.network.floatingIps
      .list({ floating_ip_address: st.apiServerLoadBalancer!.ip })
      .all();
    const [bastionFip] = BASTION
      ? await env.admin.network.floatingIps.list({ floating_ip_address: st.bastion!.floatingIP }).all()
      : [];
    assert.deepEqual(
      ours('floating IPs').sort(),
      [fip?.id, ...(BASTION ? [bastionFip?.id] : [])].sort(),
      `${label}: the floating IPs are the recorded ones`,
    );
    assert.deepEqual(fip?.tags, ['capo-demo'], `${label}: the API floating IP is tagged`);
    if (BASTION) {
      assert.deepEqual(bastionFip?.tags, ['capo-demo'], `${label}: the bastion floating IP is tagged`);
      assert.deepEqual(ours('servers'), [st.bastion!.id], `${label}: the one server is the recorded bastion`);
      const [port] = await env.admin.network.ports.list({ device_id: st.bastion!.id }).all();
      assert.equal(bastionFip?.port_id, port?.id, `${label}: the bastion floating IP is on the bastion`);
    }
    const router = await env.admin.network.routers.get(st.router!.id);
    assert.equal(
      router.external_gateway_info?.network_id,
      st.externalNetwork?.id,
      `${label}: router gateway`,
    );
    const lb = await env.admin.loadBalancer.loadBalancers.get(st.apiServerLoadBalancer!.id);
    assert.equal(lb.provisioning_status, 'ACTIVE', `${label}: the load balancer is ACTIVE`);
    assert.equal(fip?.port_id, lb.vip_port_id, `${label}: the floating IP is on the VIP`);
    for (const g of [st.controlPlaneSecurityGroup!, st.workerSecurityGroup!]) {
      const group = await env.admin.network.securityGroups.get(g.id);
      assert.deepEqual(group.tags, ['capo-demo'], `${label}: ${g.name} tagged`);
    }
    for (const [what, tags] of [
      ['network', (await env.admin.network.networks.get(st.network!.id)).tags],
      ['subnet', (await env.admin.network.subnets.get(st.network!.subnets![0]!.id)).tags],
      ['router', router.tags],
    ] as const)
      assert.deepEqual(tags, ['capo-demo'], `${label}: the ${what} is tagged`);
    assert.deepEqual(await rules(osc), expected.rules, `${label}: each group's rules, once each`);
  }

  /** Each managed group's rules, as Neutron has them (ids left out), by group name. */
  async function rules(osc: OpenStackCluster): Promise<Record<string, string[]>> {
    const st = osc.status!;
    const out: Record<string, string[]> = {};
    for (const g of [st.controlPlaneSecurityGroup, st.workerSecurityGroup, st.bastionSecurityGroup]) {
      if (!g) continue;
      const group = await env.admin.network.securityGroups.get(g.id);
      out[group.name] = group.security_group_rules
        .map((r) =>
          JSON.stringify([
            r.direction,
            r.ethertype,
            r.protocol,
            r.port_range_min,
            r.port_range_max,
            r.remote_ip_prefix,
            // The remote group by role, not by id: ids differ between runs.
            r.remote_group_id === g.id ? 'self' : r.remote_group_id ? 'other' : null,
          ]),
        )
        .sort();
    }
    return out;
  }

  async function assertNothingLeft(label: string): Promise<void> {
    assert.deepEqual(shape(baseline, await takeCensus(env.admin)), {}, `${label}: the delete leaves nothing`);
  }

  it('create: a fresh controller converges to one of each, for every k-th write', async (t) => {
    const probe = await doomed(Infinity);
    await createCluster();
    const clean = (await eventually(ready, { ...WAIT, what: 'the clean create Ready' }))!;
    const expected = { shape: shape(baseline, await takeCensus(env.admin)), rules: await rules(clean) };
    const writes = probe.sw.writes;
    t.diagnostic(
      `a clean create makes ${probe.sw.forwarded.length} OpenStack calls, ${writes} of them writes: ` +
        writesOf(probe.sw).join(', '),
    );
    t.diagnostic(`a clean create leaves ${JSON.stringify(expected.shape)}`);
    assert.deepEqual(
      Object.fromEntries(Object.entries(expected.shape).map(([k, v]) => [k, v.length])),
      // Ports: the VIP, the router's gateway and interface, one per floating IP (and the bastion's).
      {
        ...(BASTION ? { servers: 1 } : {}),
        networks: 1,
        subnets: 1,
        routers: 1,
        'security groups': BASTION ? 3 : 2,
        'load balancers': 1,
        'floating IPs': BASTION ? 2 : 1,
        ports: BASTION ? 6 : 4,
      },
    );
    await requestDelete();
    await gone('the clean create deleted');
    await assertNothingLeft('clean');
    await bury(probe);

    await sweep(t, writes, async (k) => {
      const label = `create run (write ${k})`;
      const d = await doomed(k);
      await createCluster();
      await eventually(async () => d.sw.dead || (await ready()), { ...WAIT, what: `${label}: killed` });
      const where = cut(d, k, label);
      await bury(d);
      const fresh = await healthy();
      try {
        await assertConverged(expected, label);
        await requestDelete();
        await gone(`${label}: deleted`);
        await assertNothingLeft(label);
      } finally {
        await fresh.stop();
      }
      return where;
    });
  });

  it('delete: a fresh controller finishes it and leaves nothing, for every k-th write', async (t) => {
    /** A Ready cluster, made by a healthy controller, then stopped. */
    async function readyCluster(): Promise<void> {
      const capo = await healthy();
      try {
        await createCluster();
        await eventually(ready, { ...WAIT, what: 'Ready before the delete' });
      } finally {
        await capo.stop();
      }
    }

    await readyCluster();
    // The delete is asked for while no controller runs: the doomed one's first act is to delete.
    await requestDelete();
    const probe = await doomed(Infinity);
    await gone('the clean delete done');
    await assertNothingLeft('clean delete');
    const writes = probe.sw.writes;
    t.diagnostic(
      `a clean delete makes ${probe.sw.forwarded.length} OpenStack calls, ${writes} of them writes: ` +
        writesOf(probe.sw).join(', '),
    );
    await bury(probe);

    await sweep(t, writes, async (k) => {
      const label = `delete run (write ${k})`;
      await readyCluster();
      await requestDelete();
      const d = await doomed(k);
      await eventually(async () => d.sw.dead || (await get()) === undefined, {
        ...WAIT,
        what: `${label}: killed`,
      });
      const where = cut(d, k, label);
      await bury(d);
      const fresh = await healthy();
      try {
        await gone(`${label}: deleted after restart`);
        await assertNothingLeft(label);
      } finally {
        await fresh.stop();
      }
      return where;
    });
  });
});
