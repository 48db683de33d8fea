/** Test helpers for the Neutron emulator's tests: terse HTTP calls and a network with a subnet. */
import assert from 'node:assert/strict';
import { parseCidr } from '../../../../lib/cidr.ts';
import type { SeededUser, SimResult, TestCloud } from '../../testing/harness.ts';

export interface Neutron {
  get(path: string, user?: SeededUser): Promise<SimResult>;
  post(path: string, body: unknown, user?: SeededUser): Promise<SimResult>;
  put(path: string, body?: unknown, user?: SeededUser, headers?: Record<string, string>): Promise<SimResult>;
  del(path: string, user?: SeededUser): Promise<SimResult>;
  /** Creates a network and one subnet on it, asserting both succeed. */
  network(
    user: SeededUser,
    cidr?: string,
    extra?: Record<string, unknown>,
  ): Promise<{ net: any; subnet: any }>;
  port(user: SeededUser, body: Record<string, unknown>): Promise<any>;
  /** The seeded external network `public`. */
  publicNet(): Promise<any>;
}

export function neutron(t: TestCloud): Neutron {
  const call = (
    method: string,
    path: string,
    user: SeededUser = 'admin',
    body?: unknown,
    headers?: Record<string, string>,
  ) =>
    t.request('neutron', method, path, {
      user,
      ...(body !== undefined ? { body } : {}),
      ...(headers ? { headers } : {}),
    });
  const api: Neutron = {
    get: (path, user) => call('GET', path, user),
    post: (path, body, user) => call('POST', path, user, body),
    put: (path, body, user, headers) => call('PUT', path, user, body, headers),
    del: (path, user) => call('DELETE', path, user),
    async network(user, cidr = '10.0.0.0/24', extra = {}) {
      const n = await call('POST', '/v2.0/networks', user, { network: { name: `net-${cidr}`, ...extra } });
      assert.equal(n.status, 201, JSON.stringify(n.body));
      const ipVersion = parseCidr(cidr)?.family ?? 4;
      const s = await call('POST', '/v2.0/subnets', user, {
        subnet: { network_id: n.body.network.id, cidr, ip_version: ipVersion },
      });
      assert.equal(s.status, 201, JSON.stringify(s.body));
      return { net: n.body.network, subnet: s.body.subnet };
    },
    async port(user, body) {
      const p = await call('POST', '/v2.0/ports', user, { port: body });
      assert.equal(p.status, 201, JSON.stringify(p.body));
      return p.body.port;
    },
    async publicNet() {
      const r = await call('GET', '/v2.0/networks?name=public', 'demo');
      assert.equal(r.body.networks.length, 1);
      return r.body.networks[0];
    },
  };
  return api;
}

export function neutronError(res: SimResult, status: number, type: string, message?: string | RegExp): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body.NeutronError).sort(), ['detail', 'message', 'type']);
  assert.equal(res.body.NeutronError.type, type);
  assert.equal(res.body.NeutronError.detail, '');
  if (typeof message === 'string') assert.equal(res.body.NeutronError.message, message);
  else if (message) assert.match(res.body.NeutronError.message, message);
}
