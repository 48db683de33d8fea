/**
 * Test support for the server engine, on the emulator: a tenant with two networks, a security group,
 * a key pair and a server group; a spec builder shaped like CAPO's OpenStackServer for a machine; a
 * recorder standing in for the status subresource; a driver that calls ensure/remove until done
 * (the controller's requeue loop in miniature); a census of what exists; and an API wrapper that
 * "kills" the engine right after its k-th write.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { drive as driveEngine } from '../../testing/drive.ts';
import { Killed, killable, type KillableApi } from '../../testing/kill.ts';
import type { CloudOptions } from '../../../../sim/openstack/index.ts';
import { startTestCloud, type TestCloud } from '../../../../sim/openstack/testing/harness.ts';
import type { OpenStackClient } from '../../../client.ts';
import { openClientTargetOn, silentLog, type ClientTarget } from '../../../core/testing/target.ts';
import type { Network } from '../../../network/v2/networks.ts';
import type { SecurityGroup } from '../../../network/v2/security-groups.ts';
import type { Subnet } from '../../../network/v2/subnets.ts';
import type { ServerApi } from '../api.ts';
import type { ServerEngine } from '../engine.ts';
import type { EnsureResult, RemoveResult, ServerSpec, ServerState } from '../types.ts';

export const IMAGE = 'cirros-0.6.2-x86_64-disk';
export const FLAVOR = 'm1.tiny';
/** Fast waits for the fast emulator profile. */
export const BACKOFF = { initialMs: 2, maxMs: 20, idleMs: 20 };

export interface ServerWorld {
  sim: TestCloud;
  target: ClientTarget;
  /** The demo user's client: what the engine runs with. */
  os: OpenStackClient;
  admin: OpenStackClient;
  /** The machine network (port 0). */
  network: Network;
  subnet: Subnet;
  /** A second network, for the trunk port (port 1). */
  trunkNetwork: Network;
  trunkSubnet: Subnet;
  securityGroup: SecurityGroup;
  serverGroupId: string;
  keyName: string;
  close(): Promise<void>;
}

export async function openServerWorld(options: CloudOptions = {}): Promise<ServerWorld> {
  const sim = await startTestCloud(options);
  const target = await openClientTargetOn(sim);
  const os = await target.client(target.demo, { log: silentLog });
  const admin = await target.client(target.admin!, { log: silentLog });
  const network = await os.network.networks.create({ name: 'machines' });
  const subnet = await os.network.subnets.create({
    network_id: network.id,
    cidr: '10.6.0.0/24',
    ip_version: 4,
    name: 'machines-v4',
  });
  const trunkNetwork = await os.network.networks.create({ name: 'pods' });
  const trunkSubnet = await os.network.subnets.create({
    network_id: trunkNetwork.id,
    cidr: '10.7.0.0/24',
    ip_version: 4,
    name: 'pods-v4',
  });
  await os.network.tags.replace('networks', trunkNetwork.id, ['role-pods']);
  const securityGroup = await os.network.securityGroups.create({ name: 'k8s-worker' });
  const group = await os.compute.serverGroups.create({ name: 'workers', policy: 'soft-anti-affinity' });
  const keypair = await os.compute.keypairs.create({ name: 'capo' });
  return {
    sim,
    target,
    os,
    admin,
    network,
    subnet,
    trunkNetwork,
    trunkSubnet,
    securityGroup,
    serverGroupId: group.id,
    keyName: keypair.name,
    close: () => target.close(),
  };
}

export interface SpecOptions {
  /** Root volume and an additional volume. Default true. */
  volumes?: boolean;
  /** Port 1 on the pods network, a trunk. Default true. */
  trunkPort?: boolean;
}

/**
 * A machine-like spec: port 0 on `machines` (fixed IP from its subnet by filter, the worker security
 * group by filter, a tag), port 1 `<name>-pods` a trunk on the network tagged `role-pods`; a root
 * volume and a data volume; tags, metadata, user data, config drive, key, zone, server group by
 * name and a scheduler hint.
 */
export function machineSpec(name: string, o: SpecOptions = {}): ServerSpec {
  const volumes = o.volumes ?? true;
  return {
    name,
    image: { filter: { name: IMAGE } },
    flavor: { name: FLAVOR },
    serverGroup: { filter: { name: 'workers' } },
    availabilityZone: 'nova',
    sshKeyName: 'capo',
    userData: `#cloud-config\nhostname: ${name}\n`,
    metadata: { role: 'worker', cluster: 'test' },
    tags: ['cluster-test'],
    configDrive: true,
    schedulerHints: { 'capo-hint': 'a', spread: true, weight: 2 },
    securityGroups: [{ filter: { name: 'k8s-worker' } }],
    ...(volumes
      ? {
          rootVolume: { sizeGiB: 2 },
          additionalBlockDevices: [
            { name: 'etcd', sizeGiB: 1, storage: { type: 'Volume' as const, volume: {} } },
          ],
        }
      : {}),
    ports: [
      {
        network: { filter: { name: 'machines' } },
        description: 'machine port',
        fixedIPs: [{ subnet: { filter: { name: 'machines-v4' } } }],
        tags: ['primary'],
      },
      ...((o.trunkPort ?? true)
        ? [
            {
              network: { filter: { tags: ['role-pods'] } },
              nameSuffix: 'pods',
              trunk: true,
              vnicType: 'normal',
              allowedAddressPairs: [{ ipAddress: '10.7.0.250' }],
            },
          ]
        : []),
    ],
  };
}

/** The status subresource in miniature: what `record` was last given, and every call. */
export class Recorder {
  state: ServerState = {};
  readonly calls: ServerState[] = [];
  readonly record = (s: ServerState): Promise<void> => {
    this.state = s;
    this.calls.push(s);
    return Promise.resolve();
  };
}

export type { Drive } from '../../testing/drive.ts';

/** `drive` with Pending hints capped at 20 ms: the fast profile's transitions are that short. */
export const drive = <R extends { phase: string; retryAfterMs?: number }>(
  step: () => Promise<R>,
  options: { maxCalls?: number; maxSleepMs?: number } = {},
) => driveEngine(step, { maxSleepMs: 20, ...options });

export const converge = (engine: ServerEngine, spec: ServerSpec, rec: Recorder) =>
  drive<EnsureResult>(() => engine.ensure({ spec, ...rec.state }, { record: rec.record }));

export const teardown = (engine: ServerEngine, name: string, rec: Recorder) =>
  drive<RemoveResult>(() => engine.remove({ name, ...rec.state }, { record: rec.record }));

/** What exists in the demo project, counted by an admin: servers, ports, trunks, volumes. */
export async function census(world: ServerWorld) {
  const { admin } = world;
  const project = world.network.project_id;
  return {
    servers: (await admin.compute.servers.list({ all_tenants: true, project_id: project }).all()).length,
    ports: (await admin.network.ports.list({ project_id: project }).all()).length,
    trunks: (await admin.network.trunks.list({ project_id: project }).all()).length,
    volumes: (await admin.blockStorage.volumes.list({ all_tenants: true, project_id: project }).all()).length,
  };
}

/** Write calls (POST/PUT/DELETE/PATCH) per service operation since the last reset. */
export function writes(sim: TestCloud, service: 'nova' | 'neutron' | 'cinder'): Record<string, number> {
  const ops = sim.cloud.stats.snapshot().services[service]?.operations ?? {};
  const out: Record<string, number> = {};
  for (const [op, s] of Object.entries(ops)) {
    if (/^(POST|PUT|DELETE|PATCH) /.test(op)) out[op] = s.count;
  }
  return out;
}

/** Calls `call` (sleeping each hint, capped) until the kill wrapper kills it (true) or it finishes first (false). */
export async function runUntilKilled(
  call: () => Promise<{ phase: string; retryAfterMs?: number }>,
): Promise<boolean> {
  for (let i = 0; i < 1_000; i++) {
    try {
      const r = await call();
      if (r.phase !== 'Pending') return false;
      await sleep(Math.min(r.retryAfterMs ?? 0, 20));
    } catch (err) {
      if (err instanceof Killed) return true;
      throw err;
    }
  }
  throw new Error('neither killed nor finished');
}

export { Killed };
export type KilledApi = KillableApi<ServerApi>;

/** The API as a process that dies right after its k-th OpenStack write (see testing/kill.ts). */
export function killAfterWrites(api: ServerApi, k: number): KilledApi {
  return killAfter(api, (_method, count) => count >= k);
}

/** The API as a process that dies right after the write for which `dies(method, count)` is true. */
export function killAfter(api: ServerApi, dies: (method: string, count: number) => boolean): KilledApi {
  return killable(api, dies);
}
