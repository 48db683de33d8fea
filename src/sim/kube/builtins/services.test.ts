import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestKube, type TestKube } from '../testing/harness.ts';

const S = '/api/v1/namespaces/default/services';
const MERGE = { contentType: 'application/merge-patch+json' };

function svc(name: string, spec: Record<string, unknown>): any {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: { ports: [{ name: 'http', port: 80 }], ...spec },
  };
}

describe('kube emulator: Service allocation', () => {
  let k: TestKube;
  before(
    async () => (k = await startTestKube({ serviceCIDR: '10.96.0.0/28', nodePortRange: [30000, 30009] })),
  );
  after(async () => k.close());

  it('allocates a ClusterIP from the service CIDR and defaults the spec', async () => {
    const r = await k.req('POST', S, svc('plain', {}));
    assert.equal(r.status, 201, r.text);
    assert.match(r.body.spec.clusterIP, /^10\.96\.0\.\d+$/);
    assert.notEqual(r.body.spec.clusterIP, '10.96.0.1', 'the kubernetes service holds the first address');
    assert.deepEqual(r.body.spec.clusterIPs, [r.body.spec.clusterIP]);
    assert.equal(r.body.spec.type, 'ClusterIP');
    assert.equal(r.body.spec.ports[0].protocol, 'TCP');
    assert.equal(r.body.spec.ports[0].targetPort, 80);
    assert.equal(r.body.spec.ports[0].nodePort, undefined);
    assert.deepEqual(r.body.status, { loadBalancer: {} });
  });

  it('honours a requested ClusterIP and rejects one already taken or out of range', async () => {
    const ok = await k.req('POST', S, svc('fixed', { clusterIP: '10.96.0.9' }));
    assert.equal(ok.body.spec.clusterIP, '10.96.0.9');
    const taken = await k.req('POST', S, svc('taken', { clusterIP: '10.96.0.9' }));
    assert.equal(taken.status, 422);
    assert.equal(taken.body.details.causes[0].field, 'spec.clusterIPs');
    assert.match(taken.body.message, /failed to allocate IP 10.96.0.9: provided IP is already allocated/);
    const out = await k.req('POST', S, svc('out', { clusterIP: '10.0.0.1' }));
    assert.equal(out.status, 422);
    const headless = await k.req('POST', S, svc('headless', { clusterIP: 'None' }));
    assert.equal(headless.body.spec.clusterIP, 'None');
  });

  it('allocates NodePorts for NodePort and LoadBalancer services, and rejects a duplicate', async () => {
    const np = await k.req('POST', S, svc('np', { type: 'NodePort' }));
    const port = np.body.spec.ports[0].nodePort;
    assert.ok(port >= 30000 && port <= 30009);
    assert.equal(np.body.spec.externalTrafficPolicy, 'Cluster');
    const dup = await k.req(
      'POST',
      S,
      svc('dup', { type: 'NodePort', ports: [{ port: 80, nodePort: port }] }),
    );
    assert.equal(dup.status, 422);
    assert.equal(dup.body.details.causes[0].field, 'spec.ports[0].nodePort');
    assert.equal(
      dup.body.details.causes[0].message,
      `Invalid value: ${port}: provided port is already allocated`,
    );
    const range = await k.req(
      'POST',
      S,
      svc('range', { type: 'NodePort', ports: [{ port: 80, nodePort: 31000 }] }),
    );
    assert.equal(range.status, 422);
    assert.match(range.body.message, /The range of valid ports is 30000-30009/);
    const lb = await k.req('POST', S, svc('lb', { type: 'LoadBalancer' }));
    assert.ok(lb.body.spec.ports[0].nodePort);
    assert.equal(lb.body.spec.allocateLoadBalancerNodePorts, true);
    assert.equal(lb.body.spec.healthCheckNodePort, undefined);
    const noPorts = await k.req(
      'POST',
      S,
      svc('lb-noports', { type: 'LoadBalancer', allocateLoadBalancerNodePorts: false }),
    );
    assert.equal(noPorts.body.spec.ports[0].nodePort, undefined);
  });

  it('allocates a healthCheckNodePort for LoadBalancer services with externalTrafficPolicy Local', async () => {
    const lb = await k.req('POST', S, svc('local', { type: 'LoadBalancer', externalTrafficPolicy: 'Local' }));
    assert.equal(lb.status, 201, lb.text);
    const hc = lb.body.spec.healthCheckNodePort;
    assert.ok(hc >= 30000 && hc <= 30009);
    assert.notEqual(hc, lb.body.spec.ports[0].nodePort);
    const back = await k.req('PATCH', `${S}/local`, { spec: { externalTrafficPolicy: 'Cluster' } }, MERGE);
    assert.equal(back.body.spec.healthCheckNodePort, undefined, 'dropped with the policy');
    const again = await k.req(
      'POST',
      S,
      svc('reuse', { type: 'NodePort', ports: [{ port: 80, nodePort: hc }] }),
    );
    assert.equal(again.status, 201, 'the released health check port can be taken again');
    await k.req('DELETE', `${S}/reuse`);
  });

  it('keeps allocations across updates, releases NodePorts on type change and everything on delete', async () => {
    const c = await k.req('POST', S, svc('moving', { type: 'NodePort' }));
    const ip = c.body.spec.clusterIP;
    const port = c.body.spec.ports[0].nodePort;
    const put = await k.req('PUT', `${S}/moving`, {
      ...c.body,
      spec: { ...c.body.spec, ports: [{ name: 'http', port: 80 }] },
    });
    assert.equal(put.body.spec.ports[0].nodePort, port, 'a PUT without nodePort keeps the allocated one');
    const ipChange = await k.req(
      'PATCH',
      `${S}/moving`,
      { spec: { clusterIP: '10.96.0.14', clusterIPs: ['10.96.0.14'] } },
      MERGE,
    );
    assert.equal(ipChange.status, 422, 'the ClusterIP is immutable');
    const toCluster = await k.req('PATCH', `${S}/moving`, { spec: { type: 'ClusterIP' } }, MERGE);
    assert.equal(toCluster.status, 200, toCluster.text);
    assert.equal(toCluster.body.spec.ports[0].nodePort, undefined);
    const takePort = await k.req(
      'POST',
      S,
      svc('take', { type: 'NodePort', ports: [{ port: 80, nodePort: port }] }),
    );
    assert.equal(takePort.status, 201, 'the NodePort was released');
    await k.req('DELETE', `${S}/moving`);
    const takeIp = await k.req('POST', S, svc('take-ip', { clusterIP: ip }));
    assert.equal(takeIp.status, 201, 'the ClusterIP was released');
  });

  it('does not keep what a dry run allocated', async () => {
    const dry = await k.req('POST', `${S}?dryRun=All`, svc('dry', { clusterIP: '10.96.0.13' }));
    assert.equal(dry.body.spec.clusterIP, '10.96.0.13');
    const real = await k.req('POST', S, svc('real', { clusterIP: '10.96.0.13' }));
    assert.equal(real.status, 201);
  });

  it('validates ports', async () => {
    const r = await k.req('POST', S, svc('badports', { ports: [{ port: 80 }, { port: 80 }] }));
    assert.equal(r.status, 422);
    const fields = r.body.details.causes.map((c: any) => c.field);
    assert.ok(fields.includes('spec.ports[1]'), JSON.stringify(fields));
    assert.ok(fields.includes('spec.ports[0].name'));
    const cip = await k.req('POST', S, svc('cipnp', { ports: [{ port: 80, nodePort: 30005 }] }));
    assert.equal(cip.status, 422);
    assert.match(cip.body.message, /may not be used when `type` is 'ClusterIP'/);
  });
});
