/** Shared steps of the Nova tests: microversioned calls, a tenant network with ports, booting and waiting. */
import {
  eventually,
  type RequestOptions,
  type SeededUser,
  type SimResult,
  type TestCloud,
} from '../../testing/harness.ts';

export const MV = { 'OpenStack-API-Version': 'compute 2.79', 'X-OpenStack-Nova-API-Version': '2.79' };

/** A call below /v2.1 at microversion 2.79 (the one probe.py uses) unless headers say otherwise. */
export function nova(
  t: TestCloud,
  method: string,
  path: string,
  options: RequestOptions & { version?: string } = {},
): Promise<SimResult> {
  const { version, ...rest } = options;
  const headers = version === undefined ? MV : { 'OpenStack-API-Version': `compute ${version}` };
  return t.request('nova', method, `/v2.1${path}`, { ...rest, headers: { ...headers, ...rest.headers } });
}

export async function makeNetwork(t: TestCloud, user: SeededUser, name: string, cidr: string) {
  const net = await t.request('neutron', 'POST', '/v2.0/networks', { user, body: { network: { name } } });
  if (net.status !== 201) throw new Error(`network: ${net.status} ${JSON.stringify(net.body)}`);
  const sub = await t.request('neutron', 'POST', '/v2.0/subnets', {
    user,
    body: { subnet: { network_id: net.body.network.id, cidr, ip_version: 4, name: `${name}-subnet` } },
  });
  if (sub.status !== 201) throw new Error(`subnet: ${sub.status} ${JSON.stringify(sub.body)}`);
  return { networkId: net.body.network.id as string, subnetId: sub.body.subnet.id as string };
}

export async function makePort(t: TestCloud, user: SeededUser, networkId: string, name: string) {
  const res = await t.request('neutron', 'POST', '/v2.0/ports', {
    user,
    body: { port: { network_id: networkId, name } },
  });
  if (res.status !== 201) throw new Error(`port: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.port as {
    id: string;
    mac_address: string;
    fixed_ips: { ip_address: string; subnet_id: string }[];
  };
}

export async function getPort(t: TestCloud, id: string) {
  return t.request('neutron', 'GET', `/v2.0/ports/${id}`, { user: 'admin' });
}

export async function imageId(t: TestCloud, name = 'cirros-0.6.2-x86_64-disk'): Promise<string> {
  const res = await t.request('glance', 'GET', `/v2/images?name=${name}`, { user: 'demo' });
  const id = res.body?.images?.[0]?.id as string | undefined;
  if (!id) throw new Error(`image ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  return id;
}

export async function boot(
  t: TestCloud,
  user: SeededUser,
  server: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  const res = await nova(t, 'POST', '/servers', {
    user,
    body: { server: { flavorRef: '1', networks: 'none', ...server }, ...extra },
  });
  if (res.status !== 202) throw new Error(`boot: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.server.id as string;
}

export async function waitFor(t: TestCloud, user: SeededUser, id: string, status: string) {
  return eventually(
    async () => {
      const res = await nova(t, 'GET', `/servers/${id}`, { user });
      return res.status === 200 && res.body.server.status === status ? res.body.server : undefined;
    },
    { what: `server ${id} ${status}` },
  );
}

export async function waitGone(t: TestCloud, user: SeededUser, id: string) {
  await eventually(async () => (await nova(t, 'GET', `/servers/${id}`, { user })).status === 404, {
    what: `server ${id} gone`,
  });
}
