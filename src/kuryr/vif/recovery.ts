/**
 * Restart recovery (upstream's `_recover_precreated_ports` and `_cleanup_leftover_ports`, nested):
 * the pools are rebuilt from the trunks, and what a crash left half made is deleted.
 *
 * - our subports (owner tags, device owner `trunk:subport`) that no KuryrPort holds → back in their
 *   pools, with the VLAN id the trunk has for them;
 * - our ports never attached (`compute:kuryr`: the process died between the bulk create and
 *   `add_subports`), or detached with their trunk gone (no device owner, our pool name) → deleted;
 * - the same ports before their tags were written (the process died right after the bulk create)
 *   are found by name, device owner and the owner's description, and deleted.
 * A port a KuryrPort names is never touched here: its KuryrPort's controller owns it.
 */
import type { Logger } from '../../lib/log.ts';
import type { Port } from '../../openstack/network/v2/ports.ts';
import type { VifApi } from './node-trunk.ts';
import {
  IDS_PER_REQUEST,
  KURYR_DEVICE_OWNER,
  SUBPORT_DEVICE_OWNER,
  type NestedVlanDriver,
  type PortOwner,
  type SubportVif,
  toVif,
} from './nested-vlan.ts';

export interface RecoveryInput {
  api: VifApi;
  driver: NestedVlanDriver;
  owner: PortOwner;
  /** Port ids held by KuryrPorts. */
  inUse: ReadonlySet<string>;
  log: Logger;
  signal?: AbortSignal | undefined;
}

export interface Recovered {
  /** Free subports, for the pools. */
  pooled: SubportVif[];
  /** Leftovers deleted. */
  deleted: string[];
}

export async function recoverPorts(input: RecoveryInput): Promise<Recovered> {
  const { api, owner, inUse, signal } = input;
  const ours =
    owner.tags.length > 0
      ? await api.network.ports.list({ tags: owner.tags }, { signal }).all()
      : await api.network.ports.list({ name: owner.name, description: owner.description }, { signal }).all();
  const untagged = await api.network.ports
    .list({ device_owner: KURYR_DEVICE_OWNER, name: owner.name, description: owner.description }, { signal })
    .all();
  const free = ours.filter((p) => !inUse.has(p.id));
  const subports = free.filter((p) => p.device_owner === SUBPORT_DEVICE_OWNER);
  const vlans = await vlanIds(
    api,
    subports.map((p) => p.device_id),
    signal,
  );
  const pooled: SubportVif[] = [];
  for (const p of subports) {
    const vlanId = vlans.get(p.id);
    if (vlanId !== undefined) pooled.push(toVif(p, p.device_id, vlanId));
  }
  const leftovers = new Map<string, Port>();
  for (const p of [...free, ...untagged.filter((u) => !inUse.has(u.id))]) {
    const detached = p.device_owner === '' && p.name === owner.name;
    if (p.device_owner === KURYR_DEVICE_OWNER || detached) leftovers.set(p.id, p);
  }
  const deleted: string[] = [];
  for (const p of leftovers.values()) {
    await input.driver.deletePort(p.id, signal);
    deleted.push(p.id);
  }
  if (pooled.length > 0 || deleted.length > 0)
    input.log.info(
      { pooled: pooled.length, deleted: deleted.length },
      'port pools recovered from the trunks',
    );
  return { pooled, deleted };
}

/** The VLAN id of each subport of the trunks named. */
async function vlanIds(api: VifApi, trunkIds: readonly string[], signal?: AbortSignal) {
  const out = new Map<string, number>();
  const ids = [...new Set(trunkIds)];
  for (let i = 0; i < ids.length; i += IDS_PER_REQUEST) {
    const trunks = await api.network.trunks.list({ id: ids.slice(i, i + IDS_PER_REQUEST) }, { signal }).all();
    for (const t of trunks) for (const s of t.sub_ports) out.set(s.port_id, s.segmentation_id);
  }
  return out;
}
