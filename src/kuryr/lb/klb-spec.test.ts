import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { Finalizers } from '../api/index.ts';
import {
  CLOUD_PROVIDER_FINALIZER,
  klbSpecFor,
  TIMEOUT_CLIENT_DATA_ANNOTATION,
  TIMEOUT_MEMBER_DATA_ANNOTATION,
  type KlbSpecOptions,
} from './klb-spec.ts';

const options: KlbSpecOptions = {
  serviceSubnetId: 'svc-subnet',
  projectId: 'proj',
  provider: 'default',
  timeoutClientData: 0,
  timeoutMemberData: 0,
};

const svc = (spec: V1Service['spec'], annotations?: Record<string, string>): V1Service => ({
  metadata: { name: 'web', namespace: 'shop', ...(annotations ? { annotations } : {}) },
  spec,
});

const slice = (name: string, addressType: string, ip: string): V1EndpointSlice => ({
  metadata: { name, namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } },
  addressType,
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  endpoints: [
    {
      addresses: [ip],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: 'worker-0',
      targetRef: { kind: 'Pod', namespace: 'shop', name: 'web-1', uid: 'u1' },
    },
  ],
});

describe('klbSpecFor (Service → KuryrLoadBalancer spec)', () => {
  it('a ClusterIP Service: ip, ports with targetPort as a string, subnet, project, its slices of the family', () => {
    const r = klbSpecFor(
      svc({
        type: 'ClusterIP',
        clusterIP: '172.30.0.10',
        selector: { app: 'web' },
        ports: [
          { name: 'http', port: 80, targetPort: 'http' },
          { port: 53, protocol: 'UDP' },
        ],
      }),
      [
        slice('web-b', 'IPv4', '10.128.0.5'),
        slice('web-6', 'IPv6', 'fd00::5'),
        slice('web-a', 'IPv4', '10.128.0.4'),
      ],
      options,
    );
    assert.equal(r.kind, 'served');
    if (r.kind !== 'served') return;
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.spec, {
      ip: '172.30.0.10',
      ports: [
        { name: 'http', port: 80, protocol: 'TCP', targetPort: 'http' },
        { port: 53, protocol: 'UDP', targetPort: '53' },
      ],
      project_id: 'proj',
      subnet_id: 'svc-subnet',
      type: 'ClusterIP',
      endpointSlices: [
        {
          endpoints: [
            {
              addresses: ['10.128.0.4'],
              conditions: { ready: true },
              targetRef: { kind: 'Pod', name: 'web-1', namespace: 'shop', uid: 'u1' },
            },
          ],
          ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        },
        {
          endpoints: [
            {
              addresses: ['10.128.0.5'],
              conditions: { ready: true },
              targetRef: { kind: 'Pod', name: 'web-1', namespace: 'shop', uid: 'u1' },
            },
          ],
          ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        },
      ],
    });
  });

  it('LoadBalancer: type, lb_ip, provider and timeouts (annotations over kuryr.conf)', () => {
    const r = klbSpecFor(
      svc(
        {
          type: 'LoadBalancer',
          clusterIP: '172.30.0.11',
          selector: { app: 'web' },
          loadBalancerIP: '172.24.4.50',
          ports: [{ port: 80 }],
        },
        { [TIMEOUT_CLIENT_DATA_ANNOTATION]: '70000', [TIMEOUT_MEMBER_DATA_ANNOTATION]: 'soon' },
      ),
      [],
      { ...options, provider: 'ovn', timeoutMemberData: 50_000 },
    );
    assert.equal(r.kind, 'served');
    if (r.kind !== 'served') return;
    assert.equal(r.spec.type, 'LoadBalancer');
    assert.equal(r.spec.lb_ip, '172.24.4.50');
    assert.equal(r.spec.provider, 'ovn');
    assert.equal(r.spec.timeout_client_data, 70_000);
    assert.equal(r.spec.timeout_member_data, 50_000, 'a bad annotation falls back to kuryr.conf');
    assert.match(r.problems[0] ?? '', /kuryr-timeout-member-data: "soon" is not a number/);
  });

  it('headless, ExternalName, NodePort and selector-less Services are not served', () => {
    const base = { clusterIP: '172.30.0.12', selector: { app: 'web' }, ports: [{ port: 80 }] };
    for (const [spec, why] of [
      [{ ...base, clusterIP: 'None' }, /headless/],
      [{ ...base, type: 'ExternalName', externalName: 'x.example' }, /ExternalName/],
      [{ ...base, type: 'NodePort' }, /NodePort/],
      [{ ...base, selector: {} }, /no selector/],
    ] as const) {
      const r = klbSpecFor(svc(spec), [], options);
      assert.equal(r.kind, 'skipped');
      if (r.kind === 'skipped') assert.match(r.why, why);
    }
  });

  it('leaves a Service whose load balancer the cloud provider made to it, unless kuryr took it first', () => {
    const base = svc({
      type: 'LoadBalancer',
      clusterIP: '172.30.0.12',
      selector: { app: 'web' },
      ports: [{ port: 80 }],
    });
    const withFinalizers = (finalizers: string[]) => ({
      ...base,
      metadata: { ...base.metadata, finalizers },
    });
    const ccm = klbSpecFor(withFinalizers([CLOUD_PROVIDER_FINALIZER]), [], options);
    assert.equal(ccm.kind, 'skipped');
    if (ccm.kind === 'skipped') assert.match(ccm.why, /cloud provider's.*enabled = false/);
    assert.notEqual(
      klbSpecFor(withFinalizers([CLOUD_PROVIDER_FINALIZER, Finalizers.Service]), [], options).kind,
      'skipped',
    );
    assert.notEqual(klbSpecFor(withFinalizers([]), [], options).kind, 'skipped');
  });
});
