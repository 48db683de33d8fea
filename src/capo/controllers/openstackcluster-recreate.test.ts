/**
 * The OpenStackCluster controller when Octavia puts the API load balancer in ERROR: deleted and
 * created again at once the first time, then at most once per recreate window, measured on the
 * manager's clock (a test moves it; nothing waits the window out). Asserted through the load
 * balancers, the creates Octavia saw (`/_sim/stats`) and the Events, never timings.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kinds } from '../../kube/index.ts';
import { SkewedClock } from '../../lib/testing/fake-clock.ts';
import { addFault } from '../../openstack/core/testing/target.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { capoKinds } from '../api/index.ts';
import { loadBalancerName } from '../cluster/names.ts';
import { startCapoEnv, type CapoEnv, type RunningCapo } from '../testing/env.ts';

const WAIT = { timeoutMs: 60_000, intervalMs: 50 };
const CREATE = 'POST /v2/lbaas/loadbalancers';
const WINDOW_MS = 300_000;
const NAME = 'erring';

describe('OpenStackCluster controller: an API load balancer in ERROR', () => {
  let env: CapoEnv;
  let capo: RunningCapo;
  const clock = new SkewedClock();

  before(async () => {
    env = await startCapoEnv();
    capo = await env.startCapo({ controllers: ['openstackcluster'], clock });
  });
  after(async () => {
    await capo?.stop();
    await env?.close();
  });

  /** Messages of the cluster's Events that say a recreate begins. */
  async function recreates(): Promise<string[]> {
    const all = (await env.api.listAll(kinds.EventsV1Event, { namespace: env.namespace })).items;
    return all
      .filter((e) => e.regarding?.name === NAME && /deleting it to create it again/.test(e.note ?? ''))
      .map((e) => e.note ?? '');
  }

  async function reconciles(): Promise<number> {
    const metric = (await capo.registry.getMetricsAsJSON()).find(
      (m) => m.name === 'controller_runtime_reconcile_total',
    );
    return (metric?.values ?? [])
      .filter((v) => v.labels.controller === 'openstackcluster')
      .reduce((sum, v) => sum + v.value, 0);
  }

  it('recreates at once, then not again within the window; once the manager’s clock passes it, recreates', async () => {
    // Both the first load balancer and its replacement end in ERROR.
    await addFault(env.sim, {
      kind: 'error-on-create',
      service: 'octavia',
      resource: 'loadbalancer',
      times: 2,
    });
    const creates = env.sim.cloud.stats.count('octavia', CREATE);
    await env.api.create(capoKinds.Cluster, {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Cluster',
      metadata: { name: NAME, namespace: env.namespace },
      spec: {
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'OpenStackCluster',
          name: NAME,
        },
      },
    });
    await env.api.create(capoKinds.OpenStackCluster, {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackCluster',
      metadata: { name: NAME, namespace: env.namespace, labels: { 'cluster.x-k8s.io/cluster-name': NAME } },
      spec: {
        identityRef: env.identityRef,
        managedSubnets: [{ cidr: '10.7.0.0/24' }],
        externalNetwork: { filter: { name: 'public' } },
        apiServerLoadBalancer: { enabled: true },
        disableAPIServerFloatingIP: true,
      },
    });
    const name = loadBalancerName(`${env.namespace}-${NAME}`);
    const named = () => env.admin.loadBalancer.loadBalancers.list({ name }).all();

    await eventually(async () => (await recreates()).length === 1, { ...WAIT, what: 'the first recreate' });
    await eventually(
      async () =>
        env.sim.cloud.stats.count('octavia', CREATE) === creates + 2 &&
        (await named()).some((lb) => lb.provisioning_status === 'ERROR'),
      { ...WAIT, what: 'the replacement in ERROR too' },
    );
    // Within the window the failure is reported and retried, never recreated.
    const before = await reconciles();
    await eventually(async () => (await reconciles()) > before + 2, { ...WAIT, what: 'more reconciles' });
    assert.equal(env.sim.cloud.stats.count('octavia', CREATE), creates + 2);
    assert.equal((await recreates()).length, 1);

    clock.jump(WINDOW_MS);
    const osc = await eventually(
      async () => {
        const o = await env.api.get(capoKinds.OpenStackCluster, { namespace: env.namespace, name: NAME });
        return o.status?.ready ? o : undefined;
      },
      { ...WAIT, what: 'the cluster ready after the second recreate' },
    );
    assert.equal(env.sim.cloud.stats.count('octavia', CREATE), creates + 3);
    assert.equal((await recreates()).length, 2);
    const left = await named();
    assert.deepEqual(
      left.map((lb) => [lb.id, lb.provisioning_status]),
      [[osc!.status!.apiServerLoadBalancer!.id, 'ACTIVE']],
      'the one in ERROR went, exactly the recorded one remains',
    );
  });
});
