/**
 * The nested VLAN driver (upstream's `NestedVlanPodVIFDriver.request_vifs`): pod ports made in bulk
 * and attached to a Node's trunk as VLAN subports in one `add_subports`.
 *
 *   1. the trunk's subports → the VLAN ids in use (the trunk is the truth, so a restart never
 *      reuses an id); one batch per trunk at a time in this process, from this read to the attach,
 *      so two pools of one Node never pick the same ids;
 *   2. one bulk `POST /v2.0/ports` (all or nothing in Neutron), behind the process-wide bound on
 *      bulk creates in flight (upstream's BULK_PORTS_CREATION_REQUESTS = 20);
 *   3. the owner tags on each port (most clouds refuse tags in a bulk create); until then the
 *      ports are findable by name, device owner and the owner's description (`leftovers.ts`);
 *   4. one `add_subports` with the whole batch. A 409 (an id taken by a racing writer) re-reads the
 *      trunk and tries other ids, a bounded number of times; then, or on any other failure, the
 *      ports are deleted and the ids released — the batch is rolled back, never half attached.
 */
import type { Logger } from '../../lib/log.ts';
import type { Limiter } from '../../openstack/core/limiter.ts';
import { isConflict, isNotFound } from '../../openstack/core/errors.ts';
import type { Port, PortCreateOpts } from '../../openstack/network/v2/ports.ts';
import type { SubPort, Trunk } from '../../openstack/network/v2/trunks.ts';
import { DeviceOwners } from '../api/names.ts';
import type { VifApi } from './node-trunk.ts';
import { freeVlanIds } from './vlan-ids.ts';

/** kuryr.lib's DEVICE_OWNER: a Kuryr port not (yet) attached to a trunk. */
export const KURYR_DEVICE_OWNER = DeviceOwners.Kuryr;
/** What Neutron makes a port's device owner once it is a subport. */
export const SUBPORT_DEVICE_OWNER = DeviceOwners.Subport;
/** Upstream's DEFAULT_MAX_RETRY_COUNT for VLAN id collisions. */
export const VLAN_CONFLICT_ATTEMPTS = 3;
/** Ids per filtered list request, so a URL stays well under any proxy's limit. */
export const IDS_PER_REQUEST = 100;

/** A port that is a subport of a trunk, as the pools hold it. */
export interface SubportVif {
  portId: string;
  trunkId: string;
  vlanId: number;
  projectId: string;
  networkId: string;
  /** Sorted. */
  securityGroups: string[];
  macAddress: string;
  fixedIps: { subnet_id: string; ip_address: string }[];
}

/** What every port Kuryr makes carries, so it is found again after a crash and told from others'. */
export interface PortOwner {
  /** `ownerTags(options)`. */
  tags: readonly string[];
  /** The name of a pooled port (POOL_PORT_NAME). */
  name: string;
  /** Written at create, before the tags can be: names the cluster the port belongs to. */
  description: string;
}

export interface VifBatchRequest {
  trunkId: string;
  projectId: string;
  networkId: string;
  subnetIds: readonly string[];
  securityGroups: readonly string[];
  count: number;
}

/** The trunk is gone (its Node deleted, CAPO took it): nothing is to be added to it any more. */
export class TrunkGoneError extends Error {
  override readonly name = 'TrunkGoneError';
  readonly trunkId: string;
  constructor(trunkId: string) {
    super(`trunk ${trunkId} no longer exists`);
    this.trunkId = trunkId;
  }
}

/** Every VLAN id of the trunk is taken. */
export class TrunkFullError extends Error {
  override readonly name = 'TrunkFullError';
  readonly trunkId: string;
  constructor(trunkId: string) {
    super(`trunk ${trunkId} has no free VLAN id left (1..4094 all in use)`);
    this.trunkId = trunkId;
  }
}

export interface NestedVlanDriverOptions {
  api: VifApi;
  owner: PortOwner;
  /** The process-wide bound on bulk creates in flight. */
  bulkCreates: Limiter;
  log: Logger;
}

export class NestedVlanDriver {
  private readonly api: VifApi;
  private readonly owner: PortOwner;
  private readonly bulkCreates: Limiter;
  private readonly log: Logger;
  /** Bulk creates: in flight now, the most at once, and how many so far (the benchmark reads them). */
  readonly bulkCreateStats = { inFlight: 0, peak: 0, total: 0 };
  /** The tail of each trunk's queue of batches. */
  private readonly trunkTurns = new Map<string, Promise<unknown>>();

  constructor(opts: NestedVlanDriverOptions) {
    this.api = opts.api;
    this.owner = opts.owner;
    this.bulkCreates = opts.bulkCreates;
    this.log = opts.log;
  }

  /** `count` new subports of the trunk (fewer if the trunk runs out of ids); all or none. */
  requestVifs(req: VifBatchRequest, signal?: AbortSignal): Promise<SubportVif[]> {
    const before = this.trunkTurns.get(req.trunkId) ?? Promise.resolve();
    const turn = before.catch(() => undefined).then(() => this.attachBatch(req, signal));
    const tail = turn.catch(() => undefined);
    this.trunkTurns.set(req.trunkId, tail);
    void tail.then(() => {
      if (this.trunkTurns.get(req.trunkId) === tail) this.trunkTurns.delete(req.trunkId);
    });
    return turn;
  }

  private async attachBatch(req: VifBatchRequest, signal?: AbortSignal): Promise<SubportVif[]> {
    signal?.throwIfAborted();
    const trunk = await this.trunk(req.trunkId, signal);
    let ids = freeVlanIds(inUse(trunk), req.count);
    if (ids.length === 0) throw new TrunkFullError(trunk.id);
    let ports: Port[] = [];
    try {
      ports = await this.createPorts(req, ids.length, signal);
      await this.tag(ports, signal);
      for (let attempt = 1; ; attempt++) {
        const subports: SubPort[] = ports.map((p, i) => ({
          port_id: p.id,
          segmentation_type: 'vlan',
          segmentation_id: ids[i]!,
        }));
        try {
          await this.api.network.trunks.addSubports(trunk.id, subports, { signal });
          break;
        } catch (err) {
          if (isNotFound(err)) throw new TrunkGoneError(trunk.id);
          if (!isConflict(err) || attempt >= VLAN_CONFLICT_ATTEMPTS) throw err;
          this.log.warn(
            { trunk: trunk.id, attempt },
            'VLAN ids already in use on the trunk (another writer); retrying with others',
          );
          ids = freeVlanIds(inUse(await this.trunk(trunk.id, signal)), ports.length);
          if (ids.length < ports.length) throw new TrunkFullError(trunk.id);
        }
      }
    } catch (err) {
      await this.rollback(ports);
      throw err;
    }
    return ports.map((p, i) => toVif(p, trunk.id, ids[i]!));
  }

  /**
   * Detaches the ports from the trunk and deletes them. A trunk or port already gone is success
   * (CAPO deletes a Node's trunk with its subports).
   */
  async releaseVifs(trunkId: string, portIds: readonly string[], signal?: AbortSignal): Promise<void> {
    if (portIds.length === 0) return;
    try {
      await this.api.network.trunks.removeSubports(
        trunkId,
        portIds.map((port_id) => ({ port_id })),
        { signal },
      );
    } catch (err) {
      // 404: the trunk, or one of the subports, is gone already; detach the rest one by one.
      if (!isNotFound(err)) throw err;
      if (portIds.length > 1) {
        for (const id of portIds) await this.releaseVifs(trunkId, [id], signal);
        return;
      }
    }
    for (const id of portIds) await this.deletePort(id, signal);
  }

  /** Gives a pooled port another security-group set (upstream reuses ports across sets). */
  async updateSecurityGroups(portId: string, groups: readonly string[], signal?: AbortSignal): Promise<void> {
    await this.api.network.ports.update(portId, { security_groups: [...groups] }, { signal });
  }

  /** The security groups Neutron has now for each of the ports; a port gone is absent. */
  async currentGroups(portIds: readonly string[], signal?: AbortSignal): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    for (let i = 0; i < portIds.length; i += IDS_PER_REQUEST) {
      const ids = portIds.slice(i, i + IDS_PER_REQUEST);
      const ports = await this.api.network.ports
        .list({ id: ids, fields: ['id', 'security_groups'] }, { signal })
        .all();
      for (const p of ports) out.set(p.id, p.security_groups);
    }
    return out;
  }

  async deletePort(id: string, signal?: AbortSignal): Promise<void> {
    try {
      await this.api.network.ports.delete(id, { signal });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  private async trunk(id: string, signal?: AbortSignal): Promise<Trunk> {
    try {
      return await this.api.network.trunks.get(id, { signal });
    } catch (err) {
      if (isNotFound(err)) throw new TrunkGoneError(id);
      throw err;
    }
  }

  private async createPorts(req: VifBatchRequest, count: number, signal?: AbortSignal): Promise<Port[]> {
    const body: PortCreateOpts = {
      network_id: req.networkId,
      project_id: req.projectId,
      name: this.owner.name,
      description: this.owner.description,
      device_owner: KURYR_DEVICE_OWNER,
      admin_state_up: true,
      fixed_ips: req.subnetIds.map((subnet_id) => ({ subnet_id })),
      security_groups: [...req.securityGroups],
    };
    const release = await this.bulkCreates.acquire(signal);
    const stats = this.bulkCreateStats;
    stats.inFlight++;
    stats.total++;
    stats.peak = Math.max(stats.peak, stats.inFlight);
    try {
      return await this.api.network.ports.createBulk(
        Array.from({ length: count }, () => body),
        { signal },
      );
    } finally {
      stats.inFlight--;
      release();
    }
  }

  private async tag(ports: readonly Port[], signal?: AbortSignal): Promise<void> {
    if (this.owner.tags.length === 0) return;
    await Promise.all(
      ports.map((p) => this.api.network.tags.replace('ports', p.id, this.owner.tags, { signal })),
    );
  }

  /** Best effort: what cannot be deleted now is a leftover the next recovery deletes. */
  private async rollback(ports: readonly Port[]): Promise<void> {
    for (const p of ports) {
      try {
        await this.deletePort(p.id);
      } catch (err) {
        this.log.warn({ port: p.id, err }, 'could not delete a port of a failed batch; recovery will');
      }
    }
  }
}

function inUse(trunk: Trunk): number[] {
  return trunk.sub_ports.filter((s) => s.segmentation_type === 'vlan').map((s) => s.segmentation_id);
}

export function toVif(p: Port, trunkId: string, vlanId: number): SubportVif {
  return {
    portId: p.id,
    trunkId,
    vlanId,
    projectId: p.project_id,
    networkId: p.network_id,
    securityGroups: [...p.security_groups].sort(),
    macAddress: p.mac_address,
    fixedIps: p.fixed_ips.map((f) => ({ subnet_id: f.subnet_id, ip_address: f.ip_address })),
  };
}
