/**
 * The kuryrloadbalancer controller over a load balancer's life, on both emulators: a steady state
 * costs Octavia nothing, Octavia leaving it PENDING past lbaas_activation_timeout is an Event (not a
 * blocked worker), a provider change remakes it, and a controller killed right after any of its
 * OpenStack writes is replaced by one that converges to one load balancer and one floating IP —
 * and, killed during the release, to nothing. (The kill cuts its OpenStack writes, src/openstack/
 * services/testing/kill.ts; its Kubernetes writes are what a dying process may still have sent.)
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { EventsV1Event, V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import { reconcileCount, settled } from '../../kube/testing/settle.ts';
import { addFault } from '../../openstack/core/testing/target.ts';
import { killable, type KillableApi } from '../../openstack/services/testing/kill.ts';
import type { OpenStackClient } from '../../openstack/client.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { kuryrKinds, type KuryrLoadBalancer } from '../api/index.ts';
import { FLOATING_IP_MARKER } from '../lb/names.ts';
import { startKuryrEnv, type KuryrEnv, type RunningKuryr } from '../testing/env.ts';
import { ENDPOINTSLICE_CONTROLLER, SERVICE_CONTROLLER } from './service.ts';
import { KURYRLOADBALANCER_CONTROLLER } from './kuryrloadbalancer.ts';

const NS = 'life';
const WAIT = { timeoutMs: 30_000, intervalMs: 20 };
const CONTROLLERS = [SERVICE_CONTROLLER, ENDPOINTSLICE_CONTROLLER, KURYRLOADBALANCER_CONTROLLER];

describe('kuryrloadbalancer over a load balancer’s life', () => {
  let env: KuryrEnv;
  let running: RunningKuryr | undefined;

  before(async () => {
    env = await startKuryrEnv({ nodes: 1 });
    await env.ensureNamespace(NS);
  });
  // A test that fails leaves no controller running into the next one.
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });
  after(async () => {
    await env?.close();
  });

  /** A Service and the EndpointSlice kube-controller-manager would write for it (the test plays it). */
  async function serviceWithEndpoints(name: string, type: 'ClusterIP' | 'LoadBalancer', ips: string[]) {
    await env.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: NS },
      spec: { type, selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    } satisfies V1Service);
    await env.api.create(kinds.EndpointSlice, {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-x`, namespace: NS, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    } satisfies V1EndpointSlice);
  }
  const klb = (name: string) =>
    env.api.get<KuryrLoadBalancer>(kuryrKinds.KuryrLoadBalancer, { namespace: NS, name });
  const named = (name: string) => env.admin.loadBalancer.loadBalancers.list({ name: `${NS}/${name}` }).all();
  const ourFips = async () =>
    (await env.admin.network.floatingIps.list().all()).filter((f) =>
      f.description.includes(FLOATING_IP_MARKER),
    );
  async function ready(name: string, members: number, fip = false): Promise<KuryrLoadBalancer> {
    return (await eventually(
      async () => {
        const k = await klb(name);
        const s = k.status;
        return s?.loadbalancer &&
          (s.members ?? []).length === members &&
          Boolean(s.service_pub_ip_info) === fip
          ? k
          : undefined;
      },
      { ...WAIT, what: `${name} ready with ${members} members${fip ? ' and a floating IP' : ''}` },
    ))!;
  }
  async function events(name: string, reason: string): Promise<EventsV1Event[]> {
    const list = await env.api.list(kinds.EventsV1Event, { namespace: NS });
    return list.items.filter((e) => e.regarding?.name === name && e.reason === reason);
  }
  async function gone(name: string): Promise<void> {
    await env.api.delete(kinds.Service, { namespace: NS, name });
    await eventually(
      async () => {
        const klbs = (await env.api.list(kuryrKinds.KuryrLoadBalancer, { namespace: NS })).items;
        return !klbs.some((k) => k.metadata?.name === name) && (await named(name)).length === 0;
      },
      { ...WAIT, what: `${name}'s KuryrLoadBalancer and load balancer gone` },
    );
  }

  it('a steady state costs Octavia nothing: a reconcile of a matching status reads nothing', async () => {
    running = await env.startKuryr({ controllers: CONTROLLERS });
    await serviceWithEndpoints('steady', 'ClusterIP', ['10.128.1.1', '10.128.1.2']);
    await ready('steady', 2);
    // Once the controller has nothing left to do, one more reconcile (a label on the
    // KuryrLoadBalancer wakes it) asks Octavia nothing.
    const key = [[kuryrKinds.KuryrLoadBalancer, { namespace: NS, name: 'steady' }]] as const;
    await settled(running.manager, KURYRLOADBALANCER_CONTROLLER, key);
    const since = env.sim.cloud.stats.requests().last;
    const before = await reconcileCount(running.manager, KURYRLOADBALANCER_CONTROLLER);
    await env.api.patch(kuryrKinds.KuryrLoadBalancer, { namespace: NS, name: 'steady' }, 'merge', {
      metadata: { labels: { touched: 'yes' } },
    });
    await settled(running.manager, KURYRLOADBALANCER_CONTROLLER, key);
    assert.equal(await reconcileCount(running.manager, KURYRLOADBALANCER_CONTROLLER), before + 1);
    const octavia = env.sim.cloud.stats.requests(since, { service: 'octavia' }).requests;
    assert.deepEqual(octavia, [], 'no Octavia call');
  });

  it('PENDING past lbaas_activation_timeout: a LoadBalancerStuck Event, the worker free for others', async () => {
    running = await env.startKuryr({
      controllers: CONTROLLERS,
      options: { octaviaDefaults: { lbaasActivationTimeout: 1 } },
    });
    await addFault(env.sim, { kind: 'stuck', service: 'octavia', resource: 'loadbalancer', times: 1 });
    await serviceWithEndpoints('stuck', 'ClusterIP', ['10.128.2.1']);
    await eventually(async () => (await events('stuck', 'LoadBalancerStuck')).length > 0, {
      ...WAIT,
      what: 'the LoadBalancerStuck Event',
    });
    const [event] = await events('stuck', 'LoadBalancerStuck');
    assert.match(event?.note ?? '', /PENDING_CREATE/);
    // Another Service is served meanwhile.
    await serviceWithEndpoints('beside', 'ClusterIP', ['10.128.2.2']);
    await ready('beside', 1);
    await gone('beside');
  });

  it('a provider change (amphora → ovn) releases the load balancer and makes it again', async () => {
    running = await env.startKuryr({ controllers: CONTROLLERS });
    await serviceWithEndpoints('moving', 'ClusterIP', ['10.128.3.1']);
    const first = (await ready('moving', 1)).status!.loadbalancer!;
    assert.equal(first.provider, 'amphora');
    await running.stop();
    running = await env.startKuryr({
      controllers: CONTROLLERS,
      options: { octaviaDefaults: { provider: 'ovn' } },
    });
    await eventually(
      async () => {
        const lbs = await named('moving');
        return lbs.length === 1 && lbs[0]!.provider === 'ovn' && lbs[0]!.provisioning_status === 'ACTIVE';
      },
      { ...WAIT, what: 'one ovn load balancer in place of the amphora one' },
    );
    const second = (await ready('moving', 1)).status!.loadbalancer!;
    assert.notEqual(second.id, first.id);
    assert.equal((await events('moving', 'ProviderChanged')).length, 1);
    await gone('moving');
  });

  it('killed right after any OpenStack write, a fresh controller converges to one load balancer and one floating IP', async () => {
    const fipsBefore = (await ourFips()).length;
    for (let k = 1; ; k++) {
      const name = `crash-${k}`;
      let kill: KillableApi<OpenStackClient> | undefined;
      const dying = await env.startKuryr({
        controllers: CONTROLLERS,
        context: (ctx) => {
          kill = killable(ctx.os, (_method, count) => count === k);
          ctx.os = kill.api;
        },
      });
      let died: string | undefined;
      try {
        await serviceWithEndpoints(name, 'LoadBalancer', ['10.128.4.1', '10.128.4.2']);
        // Either it dies after its k-th write, or it finishes with fewer: then every write was covered.
        died = await eventually(
          async () => {
            if (kill!.writes() >= k) return 'died';
            const s = (await klb(name)).status;
            return s?.service_pub_ip_info && (s.members ?? []).length === 2 ? 'done' : undefined;
          },
          { ...WAIT, what: `write ${k} or the end` },
        );
      } finally {
        await dying.stop();
      }
      running = await env.startKuryr({ controllers: CONTROLLERS });
      await ready(name, 2, true);
      assert.equal((await named(name)).length, 1, `one load balancer after a kill at write ${k}`);
      assert.equal((await ourFips()).length, fipsBefore + 1, `one floating IP after a kill at write ${k}`);
      await gone(name);
      assert.equal((await ourFips()).length, fipsBefore, `no floating IP left after a kill at write ${k}`);
      await running.stop();
      running = undefined;
      if (died === 'done') break;
      assert.ok(k < 10, 'a LoadBalancer Service takes fewer than 10 writes');
    }
  });

  it('killed right after any OpenStack write of a release, a fresh controller leaves nothing', async () => {
    const fipsBefore = (await ourFips()).length;
    for (let k = 1; ; k++) {
      const name = `release-${k}`;
      running = await env.startKuryr({ controllers: CONTROLLERS });
      await serviceWithEndpoints(name, 'LoadBalancer', ['10.128.5.1']);
      await ready(name, 1, true);
      await running.stop();
      running = undefined;
      let kill: KillableApi<OpenStackClient> | undefined;
      const dying = await env.startKuryr({
        controllers: CONTROLLERS,
        context: (ctx) => {
          kill = killable(ctx.os, (_method, count) => count === k);
          ctx.os = kill.api;
        },
      });
      let died: string | undefined;
      try {
        await env.api.delete(kinds.Service, { namespace: NS, name });
        died = await eventually(
          async () => {
            if (kill!.writes() >= k) return 'died';
            const klbs = (await env.api.list(kuryrKinds.KuryrLoadBalancer, { namespace: NS })).items;
            return klbs.some((x) => x.metadata?.name === name) ? undefined : 'done';
          },
          { ...WAIT, what: `write ${k} of the release or its end` },
        );
      } finally {
        await dying.stop();
      }
      running = await env.startKuryr({ controllers: CONTROLLERS });
      await eventually(
        async () => {
          const klbs = (await env.api.list(kuryrKinds.KuryrLoadBalancer, { namespace: NS })).items;
          const svcs = (await env.api.list(kinds.Service, { namespace: NS })).items;
          return (
            !klbs.some((x) => x.metadata?.name === name) &&
            !svcs.some((x) => x.metadata?.name === name) &&
            (await named(name)).length === 0 &&
            (await ourFips()).length === fipsBefore
          );
        },
        { ...WAIT, what: `nothing of ${name} left after a kill at write ${k}` },
      );
      await running.stop();
      running = undefined;
      if (died === 'done') break;
      assert.ok(k < 10, 'a release takes fewer than 10 writes');
    }
  });
});
