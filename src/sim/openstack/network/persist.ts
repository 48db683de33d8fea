/** Neutron's part of the emulator state file: the records; indexes and IPAM are rebuilt on load. */
import type { Persistent } from '../core/types.ts';
import { SubnetAllocator } from './ipam.ts';
import { parseIp } from './ip.ts';
import { reserveSegment } from './networks.ts';
import { scheduleWiring } from './ports.ts';
import type {
  FloatingIpRecord,
  NetworkRecord,
  PortRecord,
  QuotaLimits,
  RouterRecord,
  SecurityGroupRecord,
  SecurityGroupRuleRecord,
  SubnetPoolRecord,
  SubnetRecord,
  TrunkRecord,
} from './records.ts';
import { indexRule } from './security-groups.ts';
import type { NeutronState } from './state.ts';

const VERSION = 1;

interface Snapshot {
  version: number;
  stdAttrSeq: number;
  networks: NetworkRecord[];
  subnets: SubnetRecord[];
  ports: PortRecord[];
  securityGroups: SecurityGroupRecord[];
  rules: SecurityGroupRuleRecord[];
  routers: RouterRecord[];
  floatingIps: FloatingIpRecord[];
  trunks: TrunkRecord[];
  subnetPools?: SubnetPoolRecord[];
  defaultGroups: [string, string][];
  quotas: [string, Partial<QuotaLimits>][];
}

export function neutronPersistence(state: NeutronState): Persistent {
  return {
    snapshot(): Snapshot {
      return {
        version: VERSION,
        stdAttrSeq: state.stdAttrSeq,
        networks: [...state.networks.values()],
        subnets: [...state.subnets.values()],
        ports: [...state.ports.values()],
        securityGroups: [...state.securityGroups.values()],
        rules: [...state.rules.values()],
        routers: [...state.routers.values()],
        floatingIps: [...state.floatingIps.values()],
        trunks: [...state.trunks.values()],
        subnetPools: [...state.subnetPools.values()],
        defaultGroups: [...state.defaultGroups.entries()],
        quotas: [...state.quotas.entries()],
      };
    },
    restore(data: unknown): void {
      const snap = data as Partial<Snapshot> | null;
      if (!snap || snap.version !== VERSION) return;
      state.clear();
      state.stdAttrSeq = snap.stdAttrSeq ?? 0;
      for (const sp of snap.subnetPools ?? []) state.subnetPools.insert(sp);
      for (const n of snap.networks ?? []) {
        state.networks.insert(n);
        reserveSegment(state, n);
      }
      for (const s of snap.subnets ?? []) {
        state.subnets.insert(s);
        const pools = s.allocation_pools.map((p) => ({
          start: parseIp(p.start)!.value,
          end: parseIp(p.end)!.value,
        }));
        state.allocators.set(s.id, new SubnetAllocator(s.ip_version, pools));
      }
      for (const g of snap.securityGroups ?? []) state.securityGroups.insert(g);
      for (const r of snap.rules ?? []) indexRule(state, r);
      for (const p of snap.ports ?? []) state.addPort(p);
      for (const r of snap.routers ?? []) state.routers.insert(r);
      for (const f of snap.floatingIps ?? []) {
        state.floatingIps.insert(f);
        if (f.port_id) state.fipsByPort.add(f.port_id, f.id);
      }
      for (const t of snap.trunks ?? []) {
        state.trunks.insert(t);
        state.trunkByParent.set(t.port_id, t.id);
        for (const sp of t.sub_ports) state.trunkBySubport.set(sp.port_id, t.id);
      }
      for (const [project, id] of snap.defaultGroups ?? []) state.defaultGroups.set(project, id);
      for (const [project, q] of snap.quotas ?? []) state.quotas.set(project, q);
      state.seeded = true;
      // A state file is written after settling transitions; anything still bound but DOWN resumes.
      for (const p of state.ports.values()) scheduleWiring(state, p);
    },
  };
}
