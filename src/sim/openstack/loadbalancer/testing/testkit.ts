/**
 * Helpers the Octavia tests share: a Neutron subnet for VIPs, calls as demo, waiting for a load
 * balancer to settle, and the emulator's admin API (faults, forced states).
 */
import assert from 'node:assert/strict';
import { eventually, startTestCloud, type SeededUser, type TestCloud } from '../../testing/harness.ts';

/**
 * A cloud whose Octavia worker is slow enough that PENDING_* states can be observed without
 * racing it; tests finish transitions on demand with `settled`/`gone` (scheduler.settleAll).
 */
export function startSlowCloud(): Promise<TestCloud> {
  return startTestCloud({ overrides: { timeScale: 1000 } });
}

export interface LbBody {
  id: string;
  project_id: string;
  provisioning_status: string;
  operating_status: string;
  vip_port_id: string;
  vip_address: string;
  [key: string]: unknown;
}

export interface Net {
  networkId: string;
  subnetId: string;
}

/** A tenant network with one IPv4 subnet, created through Neutron's API. */
export async function makeSubnet(
  t: TestCloud,
  cidr = '10.20.0.0/24',
  user: SeededUser = 'demo',
): Promise<Net> {
  const net = await t.request<{ network: { id: string } }>('neutron', 'POST', '/v2.0/networks', {
    user,
    body: { network: { name: 'lb-net' } },
  });
  if (net.status !== 201) throw new Error(`network create: ${net.status} ${JSON.stringify(net.body)}`);
  const sub = await t.request<{ subnet: { id: string } }>('neutron', 'POST', '/v2.0/subnets', {
    user,
    body: { subnet: { network_id: net.body.network.id, cidr, ip_version: 4 } },
  });
  if (sub.status !== 201) throw new Error(`subnet create: ${sub.status} ${JSON.stringify(sub.body)}`);
  return { networkId: net.body.network.id, subnetId: sub.body.subnet.id };
}

export async function getLb(t: TestCloud, id: string, user: SeededUser = 'demo') {
  return t.request<{ loadbalancer: LbBody; faultstring?: string }>(
    'octavia',
    'GET',
    `/v2/lbaas/loadbalancers/${id}`,
    { user },
  );
}

/** Where every Octavia suite starts: a slow cloud with a demo subnet for VIPs. */
export async function startSlowCloudWithSubnet(): Promise<{ t: TestCloud; net: Net }> {
  const t = await startSlowCloud();
  return { t, net: await makeSubnet(t) };
}

/**
 * Octavia calls as demo on the suite's cloud, read through `cloud` because `before` creates it
 * after the suite has been declared. `write` must succeed and waits for `lb` to settle again.
 */
export function demoCalls(cloud: () => TestCloud) {
  const call = (method: string, path: string, body?: unknown) =>
    cloud().request('octavia', method, path, { user: 'demo', ...(body ? { body } : {}) });
  async function write(lb: LbBody, method: string, path: string, body?: unknown) {
    const res = await call(method, path, body);
    assert.ok(
      res.status >= 200 && res.status < 300,
      `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`,
    );
    await settled(cloud(), lb.id);
    return res;
  }
  return { call, write };
}

/** Waits until the load balancer reaches `status` (ACTIVE by default) and returns it. */
export async function settled(
  t: TestCloud,
  id: string,
  status = 'ACTIVE',
  user: SeededUser = 'demo',
): Promise<LbBody> {
  t.cloud.scheduler.settleAll();
  const lb = await eventually(
    async () => {
      const res = await getLb(t, id, user);
      return res.status === 200 && res.body.loadbalancer.provisioning_status === status
        ? res.body.loadbalancer
        : undefined;
    },
    { what: `load balancer ${id} ${status}` },
  );
  return lb!;
}

export async function gone(t: TestCloud, id: string): Promise<void> {
  t.cloud.scheduler.settleAll();
  await eventually(async () => (await getLb(t, id)).status === 404, { what: `load balancer ${id} deleted` });
}

/** Creates a load balancer on `subnetId` and waits for ACTIVE. */
export async function activeLb(
  t: TestCloud,
  subnetId: string,
  extra: Record<string, unknown> = {},
  user: SeededUser = 'demo',
): Promise<LbBody> {
  const res = await t.request<{ loadbalancer: LbBody }>('octavia', 'POST', '/v2/lbaas/loadbalancers', {
    user,
    body: { loadbalancer: { name: 'lb', vip_subnet_id: subnetId, ...extra } },
  });
  if (res.status !== 201) throw new Error(`lb create: ${res.status} ${JSON.stringify(res.body)}`);
  return settled(t, res.body.loadbalancer.id, 'ACTIVE', user);
}

/** The emulator's own admin API (no token), e.g. sim(t, 'POST', '/faults', {...}). */
export async function sim(t: TestCloud, method: string, path: string, body?: unknown): Promise<number> {
  const res = await fetch(`${t.url}/_sim${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  await res.arrayBuffer();
  return res.status;
}

export async function forceState(
  t: TestCloud,
  resource: string,
  id: string,
  fields: Record<string, unknown>,
) {
  const status = await sim(t, 'POST', `/state/octavia/${resource}/${id}`, fields);
  if (status !== 204) throw new Error(`force ${resource} ${id}: ${status}`);
}
