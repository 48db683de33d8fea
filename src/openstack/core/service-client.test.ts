/**
 * ServiceClient against the emulator or the real cloud of OS_CLOUD: every error class in each
 * service's own format, `expect`, microversion negotiation, Octavia feature gates, and raw bodies.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { OpenStackClient } from '../client.ts';
import {
  ApiVersionError,
  isBadRequest,
  isConflict,
  isForbidden,
  isNotFound,
  isPreconditionFailed,
  isRequestEntityTooLarge,
  OpenStackHttpError,
} from './errors.ts';
import { ServiceClient } from './service-client.ts';
import { addFault, openClientTarget, unique, type ClientTarget } from './testing/target.ts';

interface Network {
  id: string;
  revision_number: number;
}

describe('service client', () => {
  let t: ClientTarget;
  let demo: OpenStackClient;
  const cleanup: (() => Promise<unknown>)[] = [];
  before(async () => {
    t = await openClientTarget();
    demo = await t.client(t.demo);
  });
  after(async () => {
    for (const undo of cleanup.reverse()) await undo().catch(() => undefined);
    await t?.close();
  });

  const network = () => demo.serviceClient('network');
  async function makeNetwork(): Promise<Network> {
    const res = await network().request<{ network: Network }>({
      method: 'POST',
      path: 'networks',
      body: { network: { name: unique('client-net') } },
      label: 'network_create',
      expect: [201],
    });
    const id = res.body.network.id;
    cleanup.push(() =>
      network().request({ method: 'DELETE', path: `networks/${id}`, label: 'network_delete' }),
    );
    return res.body.network;
  }

  it('turns a 404 of each service into NotFound with the service message and type', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const cases: [string, string, RegExp, string | undefined][] = [
      ['network', `ports/${missing}`, /^Port .* could not be found\.$/, 'PortNotFound'],
      ['compute', `servers/${missing}`, /^Instance .* could not be found\.$/, 'itemNotFound'],
      ['load-balancer', `lbaas/loadbalancers/${missing}`, /^Load Balancer .* not found\.$/, 'Client'],
      ['image', `images/${missing}`, /^No image found with ID /, 'Not Found'],
    ];
    for (const [type, path, message, errorType] of cases) {
      await assert.rejects(
        demo.serviceClient(type).request({ method: 'GET', path, label: 'x_get' }),
        (e: unknown) => {
          assert.ok(isNotFound(e), `${type}: ${String(e)}`);
          assert.equal(e.service, type);
          assert.match(e.serviceMessage, message);
          assert.equal(e.errorType, errorType);
          assert.match(e.requestId ?? '', /^req-/);
          assert.ok(e.message.startsWith(`GET ${e.url} → 404 NotFound (${e.requestId}): `));
          return true;
        },
      );
    }
  });

  it('returns an expected error status instead of throwing', async () => {
    const res = await network().request({
      method: 'GET',
      path: 'networks/nope',
      label: 'network_get',
      expect: [200, 404],
    });
    assert.equal(res.status, 404);
  });

  it('reports 400, 403, 409 and 412 from Neutron as their kinds', async () => {
    await assert.rejects(
      network().request({
        method: 'POST',
        path: 'networks',
        body: { network: { bogus: 1 } },
        label: 'network_create',
      }),
      (e: unknown) => isBadRequest(e) && /Unrecognized attribute\(s\) 'bogus'/.test(e.serviceMessage),
    );
    await assert.rejects(
      network().request({
        method: 'POST',
        path: 'networks',
        body: { network: { name: 'x', 'provider:network_type': 'vlan' } },
        label: 'network_create',
      }),
      (e: unknown) => isForbidden(e) && e.errorType === 'PolicyNotAuthorized',
    );
    const net = await makeNetwork();
    await assert.rejects(
      network().request({
        method: 'PUT',
        path: `networks/${net.id}`,
        body: { network: { description: 'x' } },
        headers: { 'If-Match': `revision_number=${net.revision_number + 10}` },
        label: 'network_update',
      }),
      (e: unknown) => isPreconditionFailed(e) && e.errorType === 'RevisionNumberConstraintFailed',
    );
    const subnet = await network().request<{ subnet: { id: string } }>({
      method: 'POST',
      path: 'subnets',
      body: { subnet: { network_id: net.id, cidr: '10.77.0.0/24', ip_version: 4 } },
      label: 'subnet_create',
    });
    const port = await network().request<{ port: { id: string } }>({
      method: 'POST',
      path: 'ports',
      body: { port: { network_id: net.id } },
      label: 'port_create',
    });
    cleanup.push(() =>
      network().request({
        method: 'DELETE',
        path: `subnets/${subnet.body.subnet.id}`,
        label: 'subnet_delete',
      }),
    );
    cleanup.push(() =>
      network().request({ method: 'DELETE', path: `ports/${port.body.port.id}`, label: 'port_delete' }),
    );
    await assert.rejects(
      network().request({ method: 'DELETE', path: `networks/${net.id}`, label: 'network_delete' }),
      (e: unknown) => isConflict(e) && e.errorType === 'NetworkInUse' && e.method === 'DELETE',
    );
  });

  it('reports a body too large as RequestEntityTooLarge', async () => {
    // Keystone refuses bodies over 112 KiB; the emulator's limit is 16 MiB, so a fault stands in there.
    if (t.sim)
      await addFault(t.sim, {
        kind: 'request',
        service: 'keystone',
        operation: 'POST /v3/auth/tokens',
        status: 413,
        times: 1,
      });
    const padding = 'x'.repeat(200 * 1024);
    await assert.rejects(
      demo.identity.tokens.issue({
        auth: { identity: { methods: ['password'], password: { user: { id: padding } } } },
      }),
      (e: unknown) => isRequestEntityTooLarge(e) && e.service === 'identity' && !e.message.includes(padding),
    );
  });

  it("negotiates Nova's microversion and sends it on every call", async () => {
    const compute = new ServiceClient(demo.session, { type: 'compute' });
    const versions = await compute.discover();
    assert.ok(versions.min && versions.max && versions.supports('2.79'));
    assert.equal(await compute.negotiateMicroversion('2.79'), '2.79');
    const res = await compute.request({ method: 'GET', path: 'servers', label: 'server_list' });
    assert.equal(res.headers.get('openstack-api-version'), 'compute 2.79');
    const once = await compute.request({
      method: 'GET',
      path: 'servers',
      label: 'server_list',
      microversion: '2.60',
    });
    assert.equal(once.headers.get('openstack-api-version'), 'compute 2.60');
    const capped = new ServiceClient(demo.session, { type: 'compute' });
    assert.equal(
      await capped.negotiateMicroversion('2.999'),
      versions.max ? `${versions.max.major}.${versions.max.minor}` : '',
    );
    await assert.rejects(capped.negotiateMicroversion('2.999', { atLeast: '3.0' }), ApiVersionError.is);
    await assert.rejects(
      compute.request({ method: 'GET', path: 'servers', label: 'server_list', microversion: '9.99' }),
      (e: unknown) => OpenStackHttpError.is(e) && e.status === 406 && e.errorType === 'computeFault',
    );
  });

  it("reads Octavia's API versions for feature gates, once per endpoint", async () => {
    const lb = demo.serviceClient('load-balancer');
    const versions = await lb.discover();
    assert.ok(versions.supports('2.0') && versions.supports('2.26') && !versions.supports('3.0'));
    assert.equal(await lb.discover(), versions);
  });

  it('uploads and downloads raw image data as buffers and streams', async () => {
    const image = demo.serviceClient('image');
    const created = await image.request<{ id: string; status: string }>({
      method: 'POST',
      path: 'images',
      body: { name: unique('client-image'), disk_format: 'raw', container_format: 'bare' },
      label: 'image_create',
      expect: [201],
    });
    const id = created.body.id;
    cleanup.push(() => image.request({ method: 'DELETE', path: `images/${id}`, label: 'image_delete' }));
    const data = Buffer.from(Array.from({ length: 4096 }, (_, i) => i % 251));
    const put = await image.request({
      method: 'PUT',
      path: `images/${id}/file`,
      raw: { data, contentType: 'application/octet-stream' },
      label: 'image_upload',
      expect: [204],
    });
    assert.equal(put.body, undefined);
    const bytes = await image.request<Uint8Array>({
      method: 'GET',
      path: `images/${id}/file`,
      label: 'image_download',
      responseType: 'bytes',
    });
    assert.deepEqual(Buffer.from(bytes.body), data);
    const streamed = await image.request<ReadableStream<Uint8Array>>({
      method: 'GET',
      path: `images/${id}/file`,
      label: 'image_download',
      responseType: 'stream',
    });
    const chunks: Uint8Array[] = [];
    for await (const chunk of streamed.body) chunks.push(chunk);
    assert.deepEqual(Buffer.concat(chunks), data);

    const second = await image.request<{ id: string }>({
      method: 'POST',
      path: 'images',
      body: { name: unique('client-image'), disk_format: 'raw', container_format: 'bare' },
      label: 'image_create',
    });
    cleanup.push(() =>
      image.request({ method: 'DELETE', path: `images/${second.body.id}`, label: 'image_delete' }),
    );
    await image.request({
      method: 'PUT',
      path: `images/${second.body.id}/file`,
      raw: {
        data: Readable.from([data.subarray(0, 1000), data.subarray(1000)]),
        contentType: 'application/octet-stream',
      },
      label: 'image_upload',
    });
    const info = await image.request<{ size: number; status: string }>({
      method: 'GET',
      path: `images/${second.body.id}`,
      label: 'image_get',
    });
    assert.deepEqual([info.body.size, info.body.status], [4096, 'active']);
  });
});
