/**
 * Everything the emulated Neutron holds, with the secondary indexes the API needs to stay fast at
 * 10k objects, and the bookkeeping shared by every resource (revisions, timestamps, quotas).
 */
import type { EmulatedCloud } from '../core/cloud.ts';
import { isoSeconds } from '../core/ids.ts';
import type { AuthContext } from '../core/types.ts';
import { Collection, MultiIndex } from './collection.ts';
import { overQuota, policyNotAuthorized, revisionConflict } from './errors.ts';
import { parseIp } from './ip.ts';
import type { SubnetAllocator } from './ipam.ts';
import type {
  FloatingIpRecord,
  NetworkRecord,
  PortRecord,
  QuotaLimits,
  RouterRecord,
  SecurityGroupRecord,
  SecurityGroupRuleRecord,
  StandardAttrs,
  SubnetPoolRecord,
  SubnetRecord,
  TrunkRecord,
} from './records.ts';

/** Who acts: a token's project and admin flag, or another service acting for a project. */
export interface Actor {
  projectId: string;
  isAdmin: boolean;
}

export function actorOf(auth: AuthContext | undefined): Actor {
  return { projectId: auth?.projectId ?? '', isAdmin: auth?.isAdmin ?? false };
}

/**
 * Quotas a fresh project gets. Neutron's own defaults (100 networks, 500 ports, 10 routers...) would
 * stop the emulator's 10k-object workloads, so they are generous; PUT /v2.0/quotas tightens them.
 */
export const DEFAULT_QUOTAS: Readonly<QuotaLimits> = {
  network: 10_000,
  subnet: 10_000,
  subnetpool: -1,
  port: 100_000,
  router: 1_000,
  floatingip: 5_000,
  rbac_policy: 1_000,
  security_group: 1_000,
  security_group_rule: 10_000,
  trunk: -1,
};

export type QuotaResource = keyof QuotaLimits;

export class NeutronState {
  readonly cloud: EmulatedCloud;

  readonly networks = new Collection<NetworkRecord>();
  readonly subnets = new Collection<SubnetRecord>();
  readonly ports = new Collection<PortRecord>();
  readonly securityGroups = new Collection<SecurityGroupRecord>();
  readonly rules = new Collection<SecurityGroupRuleRecord>();
  readonly routers = new Collection<RouterRecord>();
  readonly floatingIps = new Collection<FloatingIpRecord>();
  readonly trunks = new Collection<TrunkRecord>();
  readonly subnetPools = new Collection<SubnetPoolRecord>();

  readonly portsByNetwork = new MultiIndex();
  readonly portsByDevice = new MultiIndex();
  /** CAPO and kuryr find their ports by name: without it each lookup walks the whole network. */
  readonly portsByName = new MultiIndex();
  readonly portsByGroup = new MultiIndex();
  readonly rulesByGroup = new MultiIndex();
  readonly fipsByPort = new MultiIndex();
  /** `${network_id} ${mac}` → port id: MACs are unique per network. */
  readonly macs = new Map<string, string>();
  readonly allocators = new Map<string, SubnetAllocator>();
  /** project → its `default` security group. */
  readonly defaultGroups = new Map<string, string>();
  readonly trunkByParent = new Map<string, string>();
  readonly trunkBySubport = new Map<string, string>();

  /** Segments in use: vxlan VNIs, `physnet vlan` pairs, flat physnets. */
  readonly vxlanIds = new Set<number>();
  readonly vlanIds = new Set<string>();
  readonly flatNets = new Set<string>();
  vxlanCursor = 1;

  readonly quotas = new Map<string, Partial<QuotaLimits>>();
  /** Pending `port becomes ACTIVE` and `floating IP becomes ACTIVE` transitions, by object id. */
  readonly pending = new Map<string, number>();

  stdAttrSeq = 0;
  seeded = false;

  constructor(cloud: EmulatedCloud) {
    this.cloud = cloud;
  }

  now(): string {
    return isoSeconds();
  }

  /** Standard attributes of a new object. */
  standard(id: string, projectId: string, description = ''): StandardAttrs {
    const now = this.now();
    return {
      id,
      project_id: projectId,
      description,
      tags: [],
      created_at: now,
      updated_at: now,
      revision_number: 0,
      standard_attr_id: ++this.stdAttrSeq,
    };
  }

  /** Every change to a Neutron object bumps its revision and updated_at. */
  bump(rec: { revision_number: number; updated_at: string }): void {
    rec.revision_number += 1;
    rec.updated_at = this.now();
  }

  /** `If-Match: revision_number=N` on PUT/DELETE: 412 when the object moved on. */
  checkRevision(rec: { revision_number: number }, ifMatch: string | undefined): void {
    if (!ifMatch) return;
    for (const part of ifMatch.split(',')) {
      const m = /^\s*revision_number=(\d+)\s*$/.exec(part);
      if (m && Number(m[1]) !== rec.revision_number)
        throw revisionConflict(Number(m[1]), rec.revision_number);
    }
  }

  changed(): void {
    this.cloud.changed();
  }

  quotaFor(projectId: string): QuotaLimits {
    return { ...DEFAULT_QUOTAS, ...this.quotas.get(projectId) };
  }

  usage(projectId: string): Record<QuotaResource, number> {
    return {
      network: this.networks.countFor(projectId),
      subnet: this.subnets.countFor(projectId),
      subnetpool: this.subnetPools.countFor(projectId),
      port: this.ports.countFor(projectId),
      router: this.routers.countFor(projectId),
      floatingip: this.floatingIps.countFor(projectId),
      rbac_policy: 0,
      security_group: this.securityGroups.countFor(projectId),
      security_group_rule: this.rules.countFor(projectId),
      trunk: this.trunks.countFor(projectId),
    };
  }

  checkQuota(resource: QuotaResource, projectId: string, count = 1): void {
    if (!projectId) return;
    const limit = this.quotaFor(projectId)[resource];
    if (limit < 0) return;
    if (this.usage(projectId)[resource] + count > limit) throw overQuota([resource]);
  }

  /** The project a create acts for: the body's, which only an admin may set to another project. */
  ownerFor(actor: Actor, requested: unknown, action: string): string {
    const project = typeof requested === 'string' ? requested : actor.projectId;
    if (!actor.isAdmin && project !== actor.projectId) throw policyNotAuthorized(`rule:${action}`);
    return project;
  }

  // ------------------------------------------------------------------ ports and their indexes

  addPort(port: PortRecord): void {
    this.ports.insert(port);
    this.portsByNetwork.add(port.network_id, port.id);
    this.portsByName.add(port.name, port.id);
    if (port.device_id) this.portsByDevice.add(port.device_id, port.id);
    for (const sg of port.security_groups) this.portsByGroup.add(sg, port.id);
    this.macs.set(`${port.network_id} ${port.mac_address}`, port.id);
    for (const f of port.fixed_ips) {
      const ip = parseIp(f.ip_address);
      if (ip) this.allocators.get(f.subnet_id)?.reserve(ip.value, port.id);
    }
  }

  dropPort(port: PortRecord): void {
    this.cancelPending(port.id);
    this.ports.remove(port.id);
    this.portsByNetwork.delete(port.network_id, port.id);
    this.portsByName.delete(port.name, port.id);
    if (port.device_id) this.portsByDevice.delete(port.device_id, port.id);
    for (const sg of port.security_groups) this.portsByGroup.delete(sg, port.id);
    this.macs.delete(`${port.network_id} ${port.mac_address}`);
    this.releaseIps(port.fixed_ips);
  }

  releaseIps(ips: readonly { subnet_id: string; ip_address: string }[]): void {
    for (const f of ips) {
      const ip = parseIp(f.ip_address);
      if (ip) this.allocators.get(f.subnet_id)?.release(ip.value);
    }
  }

  setDevice(port: PortRecord, deviceId: string, deviceOwner: string): void {
    if (port.device_id !== deviceId) {
      if (port.device_id) this.portsByDevice.delete(port.device_id, port.id);
      if (deviceId) this.portsByDevice.add(deviceId, port.id);
      port.device_id = deviceId;
    }
    port.device_owner = deviceOwner;
  }

  rename(port: PortRecord, name: string): void {
    this.portsByName.delete(port.name, port.id);
    port.name = name;
    this.portsByName.add(name, port.id);
  }

  setGroups(port: PortRecord, groups: string[]): void {
    for (const sg of port.security_groups) this.portsByGroup.delete(sg, port.id);
    port.security_groups = groups;
    for (const sg of groups) this.portsByGroup.add(sg, port.id);
  }

  setMac(port: PortRecord, mac: string): void {
    this.macs.delete(`${port.network_id} ${port.mac_address}`);
    port.mac_address = mac;
    this.macs.set(`${port.network_id} ${mac}`, port.id);
  }

  portsOf(deviceId: string): PortRecord[] {
    return [...this.portsByDevice.get(deviceId)].flatMap((id) => this.ports.get(id) ?? []);
  }

  // ------------------------------------------------------------------ delayed transitions

  schedule(id: string, delayMs: number, fn: () => void): void {
    this.cancelPending(id);
    const handle = this.cloud.scheduler.schedule(delayMs, () => {
      this.pending.delete(id);
      fn();
    });
    this.pending.set(id, handle);
  }

  cancelPending(id: string): void {
    const handle = this.pending.get(id);
    if (handle === undefined) return;
    this.cloud.scheduler.cancel(handle);
    this.pending.delete(id);
  }

  clear(): void {
    for (const id of [...this.pending.keys()]) this.cancelPending(id);
    for (const c of [
      this.networks,
      this.subnets,
      this.ports,
      this.securityGroups,
      this.rules,
      this.routers,
      this.floatingIps,
      this.trunks,
      this.subnetPools,
    ] as Collection<{ id: string; project_id: string }>[]) {
      c.clear();
    }
    for (const i of [
      this.portsByNetwork,
      this.portsByDevice,
      this.portsByName,
      this.portsByGroup,
      this.rulesByGroup,
      this.fipsByPort,
    ])
      i.clear();
    this.macs.clear();
    this.allocators.clear();
    this.defaultGroups.clear();
    this.trunkByParent.clear();
    this.trunkBySubport.clear();
    this.vxlanIds.clear();
    this.vlanIds.clear();
    this.flatNets.clear();
    this.vxlanCursor = 1;
    this.quotas.clear();
  }
}
