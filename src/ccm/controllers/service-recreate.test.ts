/**
 * The service controller when Octavia puts a Service's load balancer in ERROR: deleted and created
 * again at once the first time, then at most once per recreate window, measured on the manager's
 * clock (a test moves it; nothing waits the window out). Asserted through the load balancers, the
 * creates Octavia saw (`/_sim/stats`) and the Events, never timings.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EventsV1Event } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import { reconcileCount } from '../../kube/testing/settle.ts';
import { SkewedClock } from '../../lib/testing/fake-clock.ts';
import { addFault } from '../../openstack/core/testing/target.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { loadBalancerName } from '../naming.ts';
import { startCcmEnv, type CcmEnv, type RunningCcm } from '../testing/env.ts';
import { SERVICE_CONTROLLER } from './service.ts';
import { ServiceControllerReason } from './service/reasons.ts';

const WAIT = { timeoutMs: 60_000, intervalMs: 25 };
const CREATE = 'POST /v2/lbaas/loadbalancers';
const WINDOW_MS = 300_000;

describe('service controller: a load balancer in ERROR', () => {
  let env: CcmEnv;
  let ccm: RunningCcm;
  const clock = new SkewedClock();

  before(async () => {
    env = await startCcmEnv();
    const { subnet, publicNetwork: pub } = await env.routedSubnet('10.41.0.0/16');
    await env.api.create(kinds.Node, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'node-1' },
      status: { addresses: [{ type: 'InternalIP', address: '10.41.0.11' }] },
    });
    ccm = await env.startCcm(
      {
        controllers: ['service'],
        cloudConfig: await env.cloudConf(
          `[LoadBalancer]\nsubnet-id = ${subnet.id}\nfloating-network-id = ${pub.id}\n`,
        ),
      },
      {},
      { clock, serviceRetry: { minMs: 50, maxMs: 500 } },
    );
  });
  after(async () => {
    await env?.close();
  });

  async function events(reason: string): Promise<EventsV1Event[]> {
    const list = await env.api.list(kinds.EventsV1Event, { namespace: 'default' });
    return list.items.filter((e) => e.regarding?.name === 'web' && e.reason === reason);
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
    await env.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default' },
      spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ protocol: 'TCP', port: 80 }] },
    });
    const name = loadBalancerName('kubernetes', 'default', 'web');
    const named = () => env.os.loadBalancer.loadBalancers.list({ name }).all();

    await eventually(async () => (await events(ServiceControllerReason.Recreating)).length === 1, {
      ...WAIT,
      what: 'the first recreate',
    });
    await eventually(
      async () =>
        env.sim.cloud.stats.count('octavia', CREATE) === creates + 2 &&
        (await named()).some((lb) => lb.provisioning_status === 'ERROR'),
      { ...WAIT, what: 'the replacement in ERROR too' },
    );
    // Within the window the failure is reported and retried, never recreated.
    const mgr = ccm.ccm.manager;
    const before = await reconcileCount(mgr, SERVICE_CONTROLLER);
    await eventually(async () => (await reconcileCount(mgr, SERVICE_CONTROLLER)) > before + 2, {
      ...WAIT,
      what: 'more reconciles',
    });
    assert.equal(env.sim.cloud.stats.count('octavia', CREATE), creates + 2);
    assert.equal((await events(ServiceControllerReason.Recreating)).length, 1);
    assert.ok((await events('SyncLoadBalancerFailed')).length > 0);

    clock.jump(WINDOW_MS);
    await eventually(
      async () => {
        const s = await env.api.get(kinds.Service, { namespace: 'default', name: 'web' });
        return Boolean(s.status?.loadBalancer?.ingress?.[0]);
      },
      { ...WAIT, what: 'web has an address after the second recreate' },
    );
    assert.equal(env.sim.cloud.stats.count('octavia', CREATE), creates + 3);
    const left = await named();
    assert.deepEqual(
      left.map((lb) => lb.provisioning_status),
      ['ACTIVE'],
      'the one in ERROR went, exactly one remains',
    );
  });
});
