/**
 * Test and benchmark support for the load-balancer engine, on the emulator: a tenant network
 * routed to the external `public` network (so floating IPs can attach to VIPs), a desired-state
 * builder, a driver that calls ensure/remove until done (the controller's requeue loop in
 * miniature), write accounting from `/_sim/stats`, and an API wrapper that "kills" the engine
 * right after its k-th write.
 */
import { drive } from '../../testing/drive.ts';
import { Killed, killable, type KillableApi } from '../../testing/kill.ts';
import type { CloudOptions } from '../../../../sim/openstack/index.ts';
import { startTestCloud, type TestCloud } from '../../../../sim/openstack/testing/harness.ts';
import type { OpenStackClient } from '../../../client.ts';
import { openClientTargetOn, silentLog, type ClientTarget } from '../../../core/testing/target.ts';
import type { Network } from '../../../network/v2/networks.ts';
import type { Subnet } from '../../../network/v2/subnets.ts';
import type { LoadBalancerApi } from '../api.ts';
import type { LoadBalancerEngine } from '../engine.ts';
import type {
  DesiredListener,
  DesiredLoadBalancer,
  EnsureResult,
  FloatingIpIntent,
  RemoveResult,
} from '../types.ts';

export const FIP_MARKER = 'Floating IP for Kubernetes external service';

export interface LbWorld {
  sim: TestCloud;
  target: ClientTarget;
  os: OpenStackClient;
  network: Network;
  subnet: Subnet;
  publicNetworkId: string;
  close(): Promise<void>;
}

/** An emulator, a demo client, and a tenant subnet with a router to `public`. */
export async function openLbWorld(options: CloudOptions = {}): Promise<LbWorld> {
  const sim = await startTestCloud(options);
  const target = await openClientTargetOn(sim);
  const os = await target.client(target.demo, { log: silentLog });
  const network = await os.network.networks.create({ name: 'lb-tenant' });
  const subnet = await os.network.subnets.create({
    network_id: network.id,
    cidr: '10.10.0.0/16',
    ip_version: 4,
    name: 'lb-tenant-subnet',
  });
  const [pub] = await os.network.networks.list({ 'router:external': true }).all();
  if (!pub) throw new Error('the emulator has no external network');
  const router = await os.network.routers.create({
    name: 'lb-router',
    external_gateway_info: { network_id: pub.id },
  });
  await os.network.routers.addInterface(router.id, { subnet_id: subnet.id });
  return { sim, target, os, network, subnet, publicNetworkId: pub.id, close: () => target.close() };
}

export interface DesiredOptions {
  name?: string;
  members?: number;
  /** Listener ports; each gets a pool with the same members on a node port. */
  ports?: readonly { protocol: 'TCP' | 'UDP'; port: number; nodePort: number }[];
  serial?: boolean;
  /** false: internal. Default: external with autodetected network. */
  floatingIp?: Partial<FloatingIpIntent> | false;
  monitor?: boolean;
}

/** A member address in the tenant subnet per node: 10.10.<i/250>.<i%250 + 2>. */
export function nodeAddress(i: number): string {
  return `10.10.${Math.floor(i / 250) + 1}.${(i % 250) + 2}`;
}

/** A desired load balancer shaped like the CCM's for a Service (OCCM names). */
export function desiredLb(world: Pick<LbWorld, 'subnet'>, o: DesiredOptions = {}): DesiredLoadBalancer {
  const name = `kube_service_test_default_${o.name ?? 'web'}`;
  const members = o.members ?? 3;
  const ports = o.ports ?? [{ protocol: 'TCP' as const, port: 80, nodePort: 30080 }];
  const listeners = ports.map((p, i): DesiredListener => ({
    name: `listener_${i}_${name}`,
    protocol: p.protocol,
    port: p.port,
    connectionLimit: -1,
    allowedCidrs: null,
    pool: {
      name: `pool_${i}_${name}`,
      protocol: p.protocol,
      algorithm: 'ROUND_ROBIN',
      members: Array.from({ length: members }, (_, n) => ({
        name: `node-${n}`,
        address: nodeAddress(n),
        port: p.nodePort,
        subnetId: world.subnet.id,
      })),
      ...(o.monitor
        ? {
            healthMonitor: {
              name: `monitor_${i}_${name}`,
              type: p.protocol === 'UDP' ? ('UDP-CONNECT' as const) : ('TCP' as const),
              delay: 5,
              timeout: 3,
              maxRetries: 1,
              maxRetriesDown: 3,
            },
          }
        : {}),
    },
  }));
  const fip: FloatingIpIntent = {
    external: o.floatingIp !== false,
    description: `${FIP_MARKER} default/${o.name ?? 'web'} from cluster test`,
    ownedMarker: FIP_MARKER,
    ...(o.floatingIp === false ? {} : o.floatingIp),
  };
  return {
    identity: {
      name,
      description: `Kubernetes external service default/${o.name ?? 'web'} from cluster test`,
      sharedTagPrefix: 'kube_service_',
    },
    vip: { subnetId: world.subnet.id },
    listeners,
    floatingIp: fip,
    serialApiCalls: o.serial ?? false,
  };
}

export type { Drive } from '../../testing/drive.ts';
export { drive };

export const converge = (engine: LoadBalancerEngine, desired: DesiredLoadBalancer, o = {}) =>
  drive<EnsureResult>(() => engine.ensure(desired), o);

export const teardown = (engine: LoadBalancerEngine, desired: DesiredLoadBalancer, o = {}) =>
  drive<RemoveResult>(() => engine.remove(desired), o);

/** Write calls (POST/PUT/DELETE/PATCH) per operation of a service since the last reset. */
export function writes(sim: TestCloud, service: 'octavia' | 'neutron'): Record<string, number> {
  const ops = sim.cloud.stats.snapshot().services[service]?.operations ?? {};
  const out: Record<string, number> = {};
  for (const [op, s] of Object.entries(ops)) {
    if (/^(POST|PUT|DELETE|PATCH) /.test(op)) out[op] = s.count;
  }
  return out;
}

export const total = (counts: Record<string, number>): number =>
  Object.values(counts).reduce((a, b) => a + b, 0);

/** Every call per operation of a service (reads included). */
export function calls(sim: TestCloud, service: 'octavia' | 'neutron'): Record<string, number> {
  const ops = sim.cloud.stats.snapshot().services[service]?.operations ?? {};
  return Object.fromEntries(Object.entries(ops).map(([op, s]) => [op, s.count]));
}

export { Killed };

/** The API as a process that dies right after its k-th OpenStack write (see testing/kill.ts). */
export function killAfterWrites(api: LoadBalancerApi, k: number): KillableApi<LoadBalancerApi> {
  return killable(api, (_method, count) => count >= k);
}
