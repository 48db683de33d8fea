/**
 * How the ccm and Kuryr divide the Services: as upstream runs the cloud provider on Kuryr clusters,
 * `[LoadBalancer] enabled = false` leaves every Service to Kuryr. The ccm built with it (every
 * controller selected, as `shiftstack ccm` runs by default) never takes a Service: no finalizer, no
 * annotation, no status, no Octavia call. The same ccm with the default config does take one, so
 * the witness sees a ccm that would act.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Service } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import { settled } from '../../kube/testing/settle.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { startCcmEnv, type CcmEnv } from '../testing/env.ts';
import { LOAD_BALANCER_FINALIZER, SERVICE_CONTROLLER } from './service.ts';

describe('ccm with [LoadBalancer] enabled = false (a Kuryr cluster)', () => {
  let env: CcmEnv;
  before(async () => (env = await startCcmEnv()));
  after(async () => env?.close());

  const service = (name: string, type: 'LoadBalancer' | 'ClusterIP'): V1Service => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: { type, selector: { app: name }, ports: [{ protocol: 'TCP', port: 80, targetPort: 8080 }] },
  });

  it('leaves every Service alone: no finalizer, annotation, status or Octavia call', async () => {
    const { subnet } = await env.routedSubnet('10.60.0.0/16');
    const conf = await env.cloudConf(`[LoadBalancer]\nenabled = false\nsubnet-id = ${subnet.id}\n`);
    const since = env.sim.cloud.stats.requests().last;
    const running = await env.startCcm({ cloudConfig: conf });
    try {
      assert.ok(
        running.ccm.controllers.run.includes(SERVICE_CONTROLLER),
        'the service controller is selected',
      );
      await env.api.create(kinds.Service, service('kuryr-lb', 'LoadBalancer'));
      await env.api.create(kinds.Service, service('kuryr-cip', 'ClusterIP'));
      const keys = [
        [kinds.Service, { namespace: 'default', name: 'kuryr-lb' }],
        [kinds.Service, { namespace: 'default', name: 'kuryr-cip' }],
      ] as const;
      await settled(running.ccm.manager, SERVICE_CONTROLLER, keys);
      for (const [, key] of keys) {
        const svc = await env.api.get(kinds.Service, key);
        assert.deepEqual(svc.metadata?.finalizers ?? [], [], `${key.name}: no finalizer`);
        assert.deepEqual(
          Object.keys(svc.metadata?.annotations ?? {}).filter((a) =>
            a.startsWith('loadbalancer.openstack.org/'),
          ),
          [],
          `${key.name}: no annotation`,
        );
        assert.deepEqual(svc.status?.loadBalancer?.ingress ?? [], [], `${key.name}: no status`);
      }
      const octavia = env.sim.cloud.stats.requests(since, { service: 'octavia' }).requests;
      assert.deepEqual(octavia, [], 'no Octavia call');
    } finally {
      await running.stop();
    }
  });

  it('the same ccm with the default config takes a LoadBalancer Service (the witness)', async () => {
    const running = await env.startCcm({ cloudConfig: await env.cloudConf() });
    try {
      await env.api.create(kinds.Service, service('ccm-lb', 'LoadBalancer'));
      await eventually(
        async () =>
          (
            await env.api.get(kinds.Service, { namespace: 'default', name: 'ccm-lb' })
          ).metadata?.finalizers?.includes(LOAD_BALANCER_FINALIZER),
        { timeoutMs: 20_000, what: "the ccm's finalizer" },
      );
    } finally {
      await running.stop();
    }
  });
});
