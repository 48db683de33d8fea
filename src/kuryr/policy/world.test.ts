/** Kubernetes objects as the policy rules read them. No cloud. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { policyWorld } from './world.ts';

const pod = (name: string, over: Partial<V1Pod['spec']> = {}, status: V1Pod['status'] = {}): V1Pod => ({
  metadata: { name, namespace: 'a', labels: { app: name } },
  spec: {
    nodeName: 'worker-0',
    containers: [{ name: 'c', ports: [{ name: 'http', containerPort: 8080 }] }],
    ...over,
  },
  status,
});

describe('policy world', () => {
  it('takes the pods on the pod network, with the address of their VIF before the kubelet reports one', () => {
    const world = policyWorld(
      {
        pods: [
          pod('wired'),
          pod('reported', {}, { podIP: '10.128.0.9' }),
          pod('host', { hostNetwork: true }, { podIP: '10.0.0.5' }),
          pod('unscheduled', { nodeName: undefined }),
          pod('done', {}, { phase: 'Succeeded', podIP: '10.128.0.7' }),
        ],
        namespaces: [{ metadata: { name: 'a', labels: { team: 'a' } } }, { metadata: { name: 'b' } }],
        services: [
          {
            metadata: { name: 's', namespace: 'a' },
            spec: {
              clusterIP: '172.30.0.1',
              selector: { app: 'wired' },
              ports: [{ port: 80, targetPort: 'http' }],
            },
          },
        ],
      },
      {
        vifIp: (p) => (p.metadata?.name === 'wired' ? '10.128.0.5' : undefined),
        namespaceCidr: (ns) => (ns === 'a' ? '10.129.0.0/24' : undefined),
      },
    );
    assert.deepEqual(
      world.pods.map((p) => `${p.name} ${p.ip ?? '-'}`),
      ['wired 10.128.0.5', 'reported 10.128.0.9'],
    );
    assert.deepEqual(world.pods[0]?.ports, [{ name: 'http', containerPort: 8080, protocol: undefined }]);
    assert.deepEqual(world.namespaces, [
      { name: 'a', labels: { team: 'a' }, cidr: '10.129.0.0/24' },
      { name: 'b', labels: {}, cidr: undefined },
    ]);
    assert.deepEqual(world.services[0]?.ports, [{ port: 80, protocol: undefined, targetPort: 'http' }]);
  });
});
