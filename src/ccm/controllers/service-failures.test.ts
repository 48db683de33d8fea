/**
 * The service controller when the cloud says no: Octavia's version document briefly unreadable
 * during a create with a flavor, a flavor Octavia refuses, a pool Octavia leaves PENDING_UPDATE
 * under an ACTIVE load balancer. Asserted through what a user sees (the load balancer, Events) and
 * the OpenStack calls made (`/_sim/stats`), never timings.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { EventsV1Event, V1Service } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import { reconcileCount } from '../../kube/testing/settle.ts';
import type { LoadBalancer } from '../../openstack/loadbalancer/v2/loadbalancers.ts';
import { sharedDiscoveryCache } from '../../openstack/core/index.ts';
import { addFault, clearFaults } from '../../openstack/core/testing/target.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { ShiftstackReason } from '../events.ts';
import { Annotation } from '../service/annotations.ts';
import { startCcmEnv, type CcmEnv, type RunningCcm } from '../testing/env.ts';
import { SERVICE_CONTROLLER } from './service.ts';

const WAIT = { timeoutMs: 60_000, intervalMs: 25 };
const CREATE = 'POST /v2/lbaas/loadbalancers';
const MEMBERS_PUT = 'PUT /v2/lbaas/pools/{pool_id}/members';

describe('service controller: refusals, outages and stuck objects', () => {
  let env: CcmEnv;
  let ccm: RunningCcm;
  let flavorId: string;

  before(async () => {
    // The version document must really be read by this suite's CCM, not found in a cache.
    sharedDiscoveryCache.clear();
    env = await startCcmEnv();
    const { subnet, publicNetwork: pub } = await env.routedSubnet('10.40.0.0/16');
    for (let i = 1; i <= 2; i++) await node(`node-${i}`, `10.40.0.${10 + i}`);
    const admin = (path: string, body: unknown) =>
      env.sim.request<Record<string, { id: string }>>('octavia', 'POST', path, { user: 'admin', body });
    const profile = await admin('/v2/lbaas/flavorprofiles', {
      flavorprofile: {
        name: 'single',
        provider_name: 'amphora',
        flavor_data: '{"loadbalancer_topology": "SINGLE"}',
      },
    });
    const flavor = await admin('/v2/lbaas/flavors', {
      flavor: { name: 'small', flavor_profile_id: profile.body.flavorprofile!.id },
    });
    flavorId = flavor.body.flavor!.id;
    ccm = await env.startCcm(
      {
        controllers: ['service'],
        cloudConfig: await env.cloudConf(
          `[LoadBalancer]\nsubnet-id = ${subnet.id}\nfloating-network-id = ${pub.id}\n`,
        ),
      },
      {},
      // Stuck after 2 s instead of 10 minutes, so the suite sees the Warning.
      { serviceBackoff: { stuckAfterMs: 2_000 } },
    );
  });
  after(async () => {
    await env?.close();
  });

  function node(name: string, ip: string) {
    return env.api.create(kinds.Node, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      status: { addresses: [{ type: 'InternalIP', address: ip }] },
    });
  }

  function service(name: string, annotations: Record<string, string> = {}): Promise<V1Service> {
    return env.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: 'default', annotations },
      spec: {
        type: 'LoadBalancer',
        selector: { app: name },
        ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
      },
    });
  }

  async function events(name: string, reason: string): Promise<EventsV1Event[]> {
    const list = await env.api.list(kinds.EventsV1Event, { namespace: 'default' });
    return list.items.filter((e) => e.regarding?.name === name && e.reason === reason);
  }

  async function ready(name: string): Promise<LoadBalancer> {
    const id = await eventually(
      async () => {
        const s = await env.api.get(kinds.Service, { namespace: 'default', name });
        return s.status?.loadBalancer?.ingress?.[0] && s.metadata?.annotations?.[Annotation.LoadBalancerId];
      },
      { ...WAIT, what: `${name} has an ingress address` },
    );
    return env.os.loadBalancer.loadBalancers.get(id!);
  }

  it('creates the load balancer with its flavor once an outage of the version document is over, without degrading it', async () => {
    // Exactly one discovery fails (the transport tries 4 times): whoever reads the version next succeeds.
    await addFault(env.sim, {
      kind: 'request',
      service: 'octavia',
      operation: 'GET ',
      status: 503,
      times: 4,
    });
    env.sim.cloud.stats.reset();
    await service('versioned', { [Annotation.FlavorId]: flavorId });
    const lb = await ready('versioned');
    assert.ok(env.sim.cloud.stats.count('octavia', 'GET ') >= 4, 'the outage was seen');
    assert.equal(lb.flavor_id, flavorId);
    assert.equal(env.sim.cloud.stats.count('octavia', CREATE), 1);
    const degraded = (await events('versioned', ShiftstackReason.OptionIgnored)).map((e) => e.note);
    assert.deepEqual(degraded, [], 'no option was dropped for a version that was never read');
  });

  it('names the annotation Octavia refused, paces the failing create, and converges once it is fixed', async () => {
    await clearFaults(env.sim);
    env.sim.cloud.stats.reset();
    const bogus = '0badf1a0-0000-4000-8000-000000000000';
    await service('bogus', { [Annotation.FlavorId]: bogus });
    const [warning] = (await eventually(
      async () => {
        const found = await events('bogus', 'SyncLoadBalancerFailed');
        return found.length > 0 ? found : undefined;
      },
      { ...WAIT, what: 'SyncLoadBalancerFailed on bogus' },
    ))!;
    assert.match(
      warning!.note ?? '',
      new RegExp(`annotation ${Annotation.FlavorId}: flavor "${bogus}" was refused`),
    );
    assert.match(warning!.note ?? '', /Invalid flavor_id\. Fix: .*openstack loadbalancer flavor list/);
    assert.doesNotMatch(warning!.note ?? '', /https?:\/\//, 'no URL in the Event');
    // Upstream's pacing: 5 s after the first failure, then 10 s. A node change meanwhile is no reason
    // to send the same refused request again.
    await node('node-3', '10.40.0.13');
    await sleep(6_000);
    const posts = env.sim.cloud.stats.count('octavia', CREATE);
    assert.ok(posts >= 1 && posts <= 3, `${posts} create POSTs in 6 s`);

    await env.api.patch(kinds.Service, { namespace: 'default', name: 'bogus' }, 'merge', {
      metadata: { annotations: { [Annotation.FlavorId]: flavorId } },
    });
    const lb = await ready('bogus');
    assert.equal(lb.flavor_id, flavorId);
  });

  it('names the annotation whose floating network Neutron does not know', async () => {
    const missing = '0badf1a0-1111-4000-8000-000000000000';
    await service('nofloat', { [Annotation.FloatingNetworkId]: missing });
    const [warning] = (await eventually(
      async () => {
        const found = await events('nofloat', 'SyncLoadBalancerFailed');
        return found.length > 0 ? found : undefined;
      },
      { ...WAIT, what: 'SyncLoadBalancerFailed on nofloat' },
    ))!;
    assert.match(
      warning!.note ?? '',
      new RegExp(
        `annotation ${Annotation.FloatingNetworkId}: floating network "${missing}" was refused: .*${missing}.* Fix: .*--external`,
      ),
    );
  });

  it('waits on a pool Octavia left PENDING_UPDATE under an ACTIVE load balancer, without writing, and says so', async () => {
    // Alone on the cloud, so every member PUT counted is this Service's.
    for (const name of ['versioned', 'bogus', 'nofloat'])
      await env.api.delete(kinds.Service, { namespace: 'default', name });
    await eventually(
      async () =>
        (await env.api.list(kinds.Service, { namespace: 'default' })).items.every(
          (i) => i.spec?.type !== 'LoadBalancer',
        ),
      { ...WAIT, what: 'the other Services gone' },
    );
    await service('stuck');
    const lb = await ready('stuck');
    const [pool] = await env.os.loadBalancer.pools.list({ loadbalancer_id: lb.id }).all();
    await addFault(env.sim, { kind: 'stuck', service: 'octavia', resource: 'pool', target: pool!.id });
    env.sim.cloud.stats.reset();
    // The batch member PUT after which Octavia leaves the pool behind.
    await node('node-4', '10.40.0.14');
    const [warning] = (await eventually(
      async () => {
        const found = await events('stuck', 'LoadBalancerStuck');
        return found.length > 0 ? found : undefined;
      },
      { ...WAIT, what: 'LoadBalancerStuck on stuck' },
    ))!;
    assert.match(warning!.note ?? '', new RegExp(`pool ${pool!.id} .* PENDING_UPDATE .*operator`));
    const puts = env.sim.cloud.stats.count('octavia', MEMBERS_PUT);
    assert.ok(puts >= 1, 'the PUT that left the pool behind');
    // More node changes reach no Octavia write while the pool is busy: each look is a read, spaced
    // by the pool's age (up to 10 s).
    const mgr = ccm.ccm.manager;
    const before = await reconcileCount(mgr, SERVICE_CONTROLLER);
    await node('node-5', '10.40.0.15');
    await eventually(async () => (await reconcileCount(mgr, SERVICE_CONTROLLER)) > before + 1, {
      ...WAIT,
      what: 'more reconciles',
    });
    assert.equal(env.sim.cloud.stats.count('octavia', MEMBERS_PUT), puts, 'no write below the busy pool');

    // The operator's fix: the pool is ACTIVE again, and the members converge with one PUT.
    await clearFaults(env.sim);
    await fetch(`${env.sim.url}/_sim/state/octavia/pool/${pool!.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ provisioning_status: 'ACTIVE' }),
    });
    await eventually(async () => (await env.os.loadBalancer.members.list(pool!.id).all()).length === 5, {
      ...WAIT,
      what: '5 members',
    });
    assert.equal(env.sim.cloud.stats.count('octavia', MEMBERS_PUT), puts + 1);
  });
});
