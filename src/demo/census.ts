/**
 * What exists in the cloud, counted by an admin across every project: the resources the demo's
 * controllers create (servers, ports, networks, subnets, routers, floating IPs, load balancers,
 * security groups, volumes, trunks). A census before the scenario and one after its teardown,
 * compared by id, say whether anything of ours was left behind; the ports and networks the cloud
 * was seeded with are in the first census and so never count.
 */
import type { OpenStackClient } from '../openstack/client.ts';

export const CENSUS_KINDS = [
  'servers',
  'ports',
  'networks',
  'subnets',
  'routers',
  'floating IPs',
  'load balancers',
  'security groups',
  'volumes',
  'trunks',
] as const;
export type CensusKind = (typeof CENSUS_KINDS)[number];

export interface CensusEntry {
  id: string;
  /** Name, or the address of a floating IP: what a person recognises in a list of leaks. */
  label: string;
}

export type Census = Record<CensusKind, CensusEntry[]>;

export interface Leak extends CensusEntry {
  kind: CensusKind;
}

const entry = (id: string, label: string | null | undefined): CensusEntry => ({ id, label: label || id });

export async function takeCensus(admin: OpenStackClient, signal?: AbortSignal): Promise<Census> {
  const o = signal ? { signal } : {};
  const [servers, ports, networks, subnets, routers, fips, lbs, groups, volumes, trunks] = await Promise.all([
    admin.compute.servers.list({ all_tenants: true }, o).all(),
    admin.network.ports.list({}, o).all(),
    admin.network.networks.list({}, o).all(),
    admin.network.subnets.list({}, o).all(),
    admin.network.routers.list({}, o).all(),
    admin.network.floatingIps.list({}, o).all(),
    admin.loadBalancer.loadBalancers.list({}, o).all(),
    admin.network.securityGroups.list({}, o).all(),
    admin.blockStorage.volumes.list({ all_tenants: true }, o).all(),
    admin.network.trunks.list({}, o).all(),
  ]);
  return {
    servers: servers.map((s) => entry(s.id, s.name)),
    ports: ports.map((p) =>
      entry(p.id, p.name || `${p.device_owner || 'port'} ${p.fixed_ips[0]?.ip_address ?? ''}`),
    ),
    networks: networks.map((n) => entry(n.id, n.name)),
    subnets: subnets.map((s) => entry(s.id, s.name || s.cidr)),
    routers: routers.map((r) => entry(r.id, r.name)),
    'floating IPs': fips.map((f) => entry(f.id, f.floating_ip_address)),
    'load balancers': lbs.map((l) => entry(l.id, l.name)),
    // Neutron makes each project's `default` group the first time the project needs one, and
    // refuses to delete it for the project: it is the cloud's, not a leak of ours.
    'security groups': groups.filter((g) => g.name !== 'default').map((g) => entry(g.id, g.name)),
    volumes: volumes.map((v) => entry(v.id, v.name)),
    trunks: trunks.map((t) => entry(t.id, t.name)),
  };
}

/** Everything in `after` that was not in `before`. */
export function leaks(before: Census, after: Census): Leak[] {
  const out: Leak[] = [];
  for (const kind of CENSUS_KINDS) {
    const known = new Set(before[kind].map((e) => e.id));
    for (const e of after[kind]) if (!known.has(e.id)) out.push({ kind, ...e });
  }
  return out;
}

/** `3 servers, 1 network, …` (kinds with none are left out). */
export function describeCensus(c: Census): string {
  return (
    CENSUS_KINDS.filter((k) => c[k].length > 0)
      .map((k) => `${c[k].length} ${c[k].length === 1 ? k.replace(/s$/, '') : k}`)
      .join(', ') || 'nothing'
  );
}
