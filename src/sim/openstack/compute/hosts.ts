/**
 * The compute host behind the emulated Nova: one hypervisor `compute-0` in availability zone `nova`,
 * with its services, as os-hypervisors, os-services, os-availability-zone and limits show them.
 * Capacity is reported but not enforced, so benchmarks can boot thousands of servers.
 */
import { SimError } from '../core/errors.ts';
import type { Route, SimRequest, SimResponse } from '../core/types.ts';
import { COMPUTE_NODE_NAME, COMPUTE_NODE_UUID } from '../placement/index.ts';
import { auth, json, microIso, projectOf, requireAdmin } from './http.ts';
import type { Microversions } from './microversion.ts';

/** Placement's resource provider is this compute node: same name, and its uuid is the 2.53+ hypervisor id. */
export const HOST = COMPUTE_NODE_NAME;
export const DEFAULT_AZ = 'nova';
export const HOSTS: readonly string[] = [HOST];

const HYPERVISOR_UUID = COMPUTE_NODE_UUID;
const SERVICE_UUIDS = {
  'nova-scheduler': '3f1e2d4c-5b6a-4798-8a7b-6c5d4e3f2a11',
  'nova-conductor': '7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c22',
  'nova-compute': 'c9d8e7f6-a5b4-4c3d-8e2f-1a0b9c8d7e33',
} as const;
const SERVICES = [
  { binary: 'nova-scheduler', zone: 'internal', legacyId: 1 },
  { binary: 'nova-conductor', zone: 'internal', legacyId: 2 },
  { binary: 'nova-compute', zone: DEFAULT_AZ, legacyId: 3 },
] as const;

const CAPACITY = { vcpus: 1000, memory_mb: 800_000, local_gb: 600_000, reserved_mb: 512 };

export interface HostUsage {
  vcpus: number;
  memory_mb: number;
  local_gb: number;
  running_vms: number;
  servers: { uuid: string; name: string }[];
}

export interface ProjectUsage {
  instances: number;
  cores: number;
  ram: number;
  serverGroups: number;
}

/** Services report every 10 s; the last report is a little in the past. */
function heartbeat(): string {
  const now = Date.now();
  return microIso(new Date(now - (now % 10_000))).replace(/\.\d+$/, '.000000');
}

export function hostRoutes(
  mv: Microversions,
  usage: { host(host: string): HostUsage; project(projectId: string): ProjectUsage },
): Route[] {
  const hypervisorId = (req: SimRequest): string | number => (mv.atLeast(req, '2.53') ? HYPERVISOR_UUID : 1);
  const serviceId = (req: SimRequest, binary: keyof typeof SERVICE_UUIDS, legacy: number): string | number =>
    mv.atLeast(req, '2.53') ? SERVICE_UUIDS[binary] : legacy;

  const brief = (req: SimRequest) => ({
    id: hypervisorId(req),
    hypervisor_hostname: HOST,
    state: 'up',
    status: 'enabled',
  });

  const detail = (req: SimRequest, withServers: boolean) => {
    const u = usage.host(HOST);
    const out: Record<string, unknown> = {
      ...brief(req),
      hypervisor_type: 'QEMU',
      hypervisor_version: 6002000,
      host_ip: '127.0.0.1',
      service: { id: serviceId(req, 'nova-compute', 3), host: HOST, disabled_reason: null },
    };
    if (mv.atLeast(req, '2.88')) {
      out['uptime'] = ' 12:00:00 up 1 day,  1 user,  load average: 0.10, 0.05, 0.01';
    } else {
      const memUsed = CAPACITY.reserved_mb + u.memory_mb;
      const cpuInfo = {
        arch: 'x86_64',
        model: 'Nehalem',
        vendor: 'Intel',
        features: ['pge', 'clflush'],
        topology: { cores: 1, threads: 1, sockets: 4 },
      };
      Object.assign(out, {
        vcpus: CAPACITY.vcpus,
        memory_mb: CAPACITY.memory_mb,
        local_gb: CAPACITY.local_gb,
        vcpus_used: u.vcpus,
        memory_mb_used: memUsed,
        local_gb_used: u.local_gb,
        free_ram_mb: CAPACITY.memory_mb - memUsed,
        free_disk_gb: CAPACITY.local_gb - u.local_gb,
        current_workload: 0,
        running_vms: u.running_vms,
        disk_available_least: 0,
        cpu_info: mv.atLeast(req, '2.28') ? cpuInfo : JSON.stringify(cpuInfo),
      });
    }
    if (withServers) out['servers'] = u.servers;
    return out;
  };

  /** 2.53 filters by hostname pattern and can embed servers; other hostnames match nothing. */
  const matching = (req: SimRequest): boolean => {
    const pattern = req.query.get('hypervisor_hostname_pattern');
    return pattern === null || HOST.includes(pattern);
  };

  const hypervisorList = (req: SimRequest, detailed: boolean): SimResponse => {
    requireAdmin(req, `os_compute_api:os-hypervisors:${detailed ? 'list-detail' : 'list'}`);
    const withServers =
      mv.atLeast(req, '2.53') && (req.query.get('with_servers') ?? '').toLowerCase() === 'true';
    const marker = req.query.get('marker');
    if (marker !== null && String(hypervisorId(req)) !== marker)
      throw new SimError(400, `marker [${marker}] not found`);
    const items = marker !== null || !matching(req) ? [] : [detailed ? detail(req, withServers) : brief(req)];
    if (req.query.get('hypervisor_hostname_pattern') !== null && items.length === 0 && marker === null) {
      throw new SimError(
        404,
        `No hypervisor matching '${req.query.get('hypervisor_hostname_pattern')}' could be found.`,
      );
    }
    return json(200, { hypervisors: items });
  };

  const hypervisorShow = (req: SimRequest): SimResponse => {
    requireAdmin(req, 'os_compute_api:os-hypervisors:show');
    const id = req.params['hypervisor_id']!;
    if (id !== String(hypervisorId(req)))
      throw new SimError(404, `Hypervisor with ID '${id}' could not be found.`);
    const withServers =
      mv.atLeast(req, '2.53') && (req.query.get('with_servers') ?? '').toLowerCase() === 'true';
    return json(200, { hypervisor: detail(req, withServers) });
  };

  const services = (req: SimRequest): SimResponse => {
    requireAdmin(req, 'os_compute_api:os-services:list');
    const host = req.query.get('host');
    const binary = req.query.get('binary');
    const updated = heartbeat();
    const items = SERVICES.filter(
      (s) => (host === null || host === HOST) && (binary === null || binary === s.binary),
    ).map((s) => ({
      binary: s.binary,
      host: HOST,
      id: serviceId(req, s.binary, s.legacyId),
      zone: s.zone,
      status: 'enabled',
      state: 'up',
      updated_at: updated,
      disabled_reason: null,
      ...(mv.atLeast(req, '2.11') ? { forced_down: false } : {}),
    }));
    return json(200, { services: items });
  };

  const zones = (req: SimRequest, detailed: boolean): SimResponse => {
    if (!detailed) {
      return json(200, {
        availabilityZoneInfo: [{ zoneName: DEFAULT_AZ, zoneState: { available: true }, hosts: null }],
      });
    }
    requireAdmin(req, 'os_compute_api:os-availability-zone:detail');
    const updated = heartbeat();
    const svc = () => ({ available: true, active: true, updated_at: updated });
    return json(200, {
      availabilityZoneInfo: [
        {
          zoneName: 'internal',
          zoneState: { available: true },
          hosts: { [HOST]: { 'nova-scheduler': svc(), 'nova-conductor': svc() } },
        },
        {
          zoneName: DEFAULT_AZ,
          zoneState: { available: true },
          hosts: { [HOST]: { 'nova-compute': svc() } },
        },
      ],
    });
  };

  const limits = (req: SimRequest): SimResponse => {
    auth(req);
    const requested = req.query.get('tenant_id');
    if (requested !== null && requested !== projectOf(req))
      requireAdmin(req, 'os_compute_api:limits:other_project');
    const u = usage.project(requested ?? projectOf(req));
    // Only the per-server limits are enforced; project quotas are unlimited (-1) in the emulator.
    const absolute: Record<string, number> = {
      maxImageMeta: 128,
      maxPersonality: 5,
      maxPersonalitySize: 10240,
      maxSecurityGroupRules: -1,
      maxSecurityGroups: -1,
      maxServerGroupMembers: -1,
      maxServerGroups: -1,
      maxServerMeta: 128,
      maxTotalCores: -1,
      maxTotalFloatingIps: -1,
      maxTotalInstances: -1,
      maxTotalKeypairs: -1,
      maxTotalRAMSize: -1,
      totalCoresUsed: u.cores,
      totalFloatingIpsUsed: 0,
      totalInstancesUsed: u.instances,
      totalRAMUsed: u.ram,
      totalSecurityGroupsUsed: 0,
      totalServerGroupsUsed: u.serverGroups,
    };
    if (mv.atLeast(req, '2.36')) {
      for (const k of [
        'maxSecurityGroupRules',
        'maxSecurityGroups',
        'maxTotalFloatingIps',
        'totalFloatingIpsUsed',
        'totalSecurityGroupsUsed',
      ]) {
        delete absolute[k];
      }
    }
    if (mv.atLeast(req, '2.57')) {
      delete absolute['maxPersonality'];
      delete absolute['maxPersonalitySize'];
    }
    return json(200, { limits: { rate: [], absolute } });
  };

  return [
    { method: 'GET', template: '/v2.1/os-hypervisors', handler: (req) => hypervisorList(req, false) },
    { method: 'GET', template: '/v2.1/os-hypervisors/detail', handler: (req) => hypervisorList(req, true) },
    { method: 'GET', template: '/v2.1/os-hypervisors/{hypervisor_id}', handler: hypervisorShow },
    { method: 'GET', template: '/v2.1/os-services', handler: services },
    { method: 'GET', template: '/v2.1/os-availability-zone', handler: (req) => zones(req, false) },
    { method: 'GET', template: '/v2.1/os-availability-zone/detail', handler: (req) => zones(req, true) },
    { method: 'GET', template: '/v2.1/limits', handler: limits },
  ];
}
