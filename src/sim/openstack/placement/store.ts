/**
 * Placement's resource providers, inventories, traits and allocations. Usage is kept per provider
 * as allocations change, so usages and candidates stay cheap with thousands of consumers.
 */
import { SimError } from '../core/errors.ts';
import { uuid } from '../core/ids.ts';
import type { Persistent } from '../core/types.ts';
import { COMPUTE_NODE_TRAITS, RESOURCE_CLASSES, STANDARD_TRAITS } from './catalog.ts';
import { badRequest } from './errors.ts';

export interface Inventory {
  total: number;
  reserved: number;
  min_unit: number;
  max_unit: number;
  step_size: number;
  allocation_ratio: number;
}

export interface ProviderRecord {
  uuid: string;
  name: string;
  generation: number;
  parent_provider_uuid: string | null;
  root_provider_uuid: string;
  inventories: Record<string, Inventory>;
  traits: string[];
  aggregates: string[];
  /** Milliseconds; the `last-modified` of provider answers from 1.15. */
  updated_at: number;
}

export interface ConsumerRecord {
  uuid: string;
  project_id: string;
  user_id: string;
  generation: number;
  /** Provider uuid → resource class → amount. */
  allocations: Record<string, Record<string, number>>;
}

export type Resources = Record<string, number>;

export const capacity = (inv: Inventory): number =>
  Math.floor((inv.total - inv.reserved) * inv.allocation_ratio);

export class PlacementStore implements Persistent {
  readonly providers = new Map<string, ProviderRecord>();
  readonly consumers = new Map<string, ConsumerRecord>();
  /** Trait names in creation order (the order GET /traits answers in). */
  private traitList: string[] = [...STANDARD_TRAITS];
  private readonly traitSet = new Set(this.traitList);
  private readonly usages = new Map<string, Map<string, number>>();
  private readonly onChange: () => void;

  constructor(onChange: () => void) {
    this.onChange = onChange;
  }

  /** The compute node of the fake virt driver: huge, so schedulers never run out. */
  seedComputeNode(name: string, id: string = uuid()): ProviderRecord {
    const rp: ProviderRecord = {
      uuid: id,
      name,
      // Created, then given its inventory and traits: generation 2, as nova-compute leaves it.
      generation: 2,
      parent_provider_uuid: null,
      root_provider_uuid: id,
      inventories: {
        VCPU: { total: 1000, reserved: 0, min_unit: 1, max_unit: 1000, step_size: 1, allocation_ratio: 16.0 },
        MEMORY_MB: {
          total: 800000,
          reserved: 512,
          min_unit: 1,
          max_unit: 800000,
          step_size: 1,
          allocation_ratio: 1.5,
        },
        DISK_GB: {
          total: 600000,
          reserved: 0,
          min_unit: 1,
          max_unit: 600000,
          step_size: 1,
          allocation_ratio: 1.0,
        },
      },
      traits: [...COMPUTE_NODE_TRAITS],
      aggregates: [],
      updated_at: Date.now(),
    };
    this.providers.set(id, rp);
    return rp;
  }

  provider(id: string): ProviderRecord | undefined {
    return this.providers.get(id);
  }

  usage(rp: ProviderRecord): Resources {
    const used = this.usages.get(rp.uuid);
    const out: Resources = {};
    for (const rc of Object.keys(rp.inventories)) out[rc] = used?.get(rc) ?? 0;
    return out;
  }

  projectUsage(projectId: string, userId: string | null): Resources {
    const out: Resources = {};
    for (const c of this.consumers.values()) {
      if (c.project_id !== projectId || (userId !== null && c.user_id !== userId)) continue;
      for (const res of Object.values(c.allocations)) {
        for (const [rc, n] of Object.entries(res)) out[rc] = (out[rc] ?? 0) + n;
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- traits

  get traits(): readonly string[] {
    return this.traitList;
  }

  hasTrait(name: string): boolean {
    return this.traitSet.has(name);
  }

  /** PUT /traits/{name}: true when created. Only CUSTOM_ traits may be created. */
  createTrait(name: string): boolean {
    if (!/^CUSTOM_[A-Z0-9_]+$/.test(name)) {
      throw badRequest(
        `The trait is invalid. A valid trait must be no longer than 255 characters, start with the prefix "CUSTOM_" and use following characters: "A"-"Z", "0"-"9" and "_"`,
      );
    }
    if (this.traitSet.has(name)) return false;
    this.traitSet.add(name);
    this.traitList.push(name);
    this.onChange();
    return true;
  }

  // ---------------------------------------------------------------- allocations

  /**
   * Replaces a consumer's allocations (PUT /allocations/{consumer}); an empty set removes it.
   * `expectedGeneration` is checked from 1.28 (undefined skips the check).
   */
  setAllocations(
    consumerId: string,
    spec: { project_id: string; user_id: string; allocations: Record<string, Resources> },
    expectedGeneration?: number | null,
  ): void {
    const existing = this.consumers.get(consumerId);
    if (expectedGeneration !== undefined) {
      const actual = existing?.generation ?? null;
      if (actual !== expectedGeneration) {
        throw new SimError(
          409,
          `consumer generation conflict - expected ${expectedGeneration ?? 'null'} but got ${actual ?? 'None'}`,
          { type: 'placement.concurrent_update' },
        );
      }
    }
    const touched = new Set<string>([
      ...Object.keys(spec.allocations),
      ...Object.keys(existing?.allocations ?? {}),
    ]);
    for (const [rpId, resources] of Object.entries(spec.allocations)) {
      const rp = this.providers.get(rpId);
      if (!rp) throw badRequest(`Allocation for resource provider '${rpId}' that does not exist.`);
      for (const [rc, amount] of Object.entries(resources)) {
        const inv = rp.inventories[rc];
        if (!inv) {
          throw new SimError(
            409,
            `Unable to allocate inventory: Inventory for '${rc}' on resource provider '${rpId}' invalid.`,
            { type: 'placement.undefined_code' },
          );
        }
        const already = existing?.allocations[rpId]?.[rc] ?? 0;
        const used = (this.usages.get(rpId)?.get(rc) ?? 0) - already;
        if (
          amount < inv.min_unit ||
          amount > inv.max_unit ||
          amount % inv.step_size !== 0 ||
          used + amount > capacity(inv)
        ) {
          throw new SimError(
            409,
            `Unable to allocate inventory: Unable to create allocation for '${rc}' on resource provider '${rpId}'. The requested amount would exceed the capacity.`,
            { type: 'placement.undefined_code' },
          );
        }
      }
    }
    if (existing) this.account(existing.allocations, -1);
    if (Object.keys(spec.allocations).length === 0) {
      this.consumers.delete(consumerId);
    } else {
      const record: ConsumerRecord = {
        uuid: consumerId,
        project_id: spec.project_id,
        user_id: spec.user_id,
        generation: (existing?.generation ?? 0) + 1,
        allocations: spec.allocations,
      };
      this.consumers.set(consumerId, record);
      this.account(record.allocations, 1);
    }
    for (const rpId of touched) this.bump(rpId);
    this.onChange();
  }

  /**
   * A server's claim on the compute node, for Nova to call at boot (and `release` at delete) once the
   * cloud carries a placement interface; throws 409 as PUT /allocations does when it does not fit.
   */
  allocate(consumerId: string, projectId: string, userId: string, resources: Resources): void {
    const node = this.providers.values().next().value;
    if (!node)
      throw new SimError(409, 'No resource provider to allocate from.', { type: 'placement.undefined_code' });
    this.setAllocations(consumerId, {
      project_id: projectId,
      user_id: userId,
      allocations: { [node.uuid]: resources },
    });
  }

  release(consumerId: string): void {
    this.deleteAllocations(consumerId);
  }

  deleteAllocations(consumerId: string): boolean {
    const existing = this.consumers.get(consumerId);
    if (!existing) return false;
    this.account(existing.allocations, -1);
    this.consumers.delete(consumerId);
    for (const rpId of Object.keys(existing.allocations)) this.bump(rpId);
    this.onChange();
    return true;
  }

  /** Providers able to serve `resources` (and carrying `required`, lacking `forbidden` traits). */
  candidates(resources: Resources, required: string[], forbidden: string[]): ProviderRecord[] {
    const out: ProviderRecord[] = [];
    for (const rp of this.providers.values()) {
      if (!required.every((t) => rp.traits.includes(t))) continue;
      if (forbidden.some((t) => rp.traits.includes(t))) continue;
      if (this.fits(rp, resources)) out.push(rp);
    }
    return out;
  }

  fits(rp: ProviderRecord, resources: Resources): boolean {
    for (const [rc, amount] of Object.entries(resources)) {
      const inv = rp.inventories[rc];
      if (!inv) return false;
      const used = this.usages.get(rp.uuid)?.get(rc) ?? 0;
      if (amount < inv.min_unit || amount > inv.max_unit || amount % inv.step_size !== 0) return false;
      if (used + amount > capacity(inv)) return false;
    }
    return true;
  }

  isResourceClass(name: string): boolean {
    return (RESOURCE_CLASSES as readonly string[]).includes(name) || /^CUSTOM_[A-Z0-9_]+$/.test(name);
  }

  // ---------------------------------------------------------------- persistence

  snapshot(): unknown {
    return {
      providers: [...this.providers.values()],
      consumers: [...this.consumers.values()],
      traits: this.traitList,
    };
  }

  restore(raw: unknown): void {
    const snap = raw as { providers?: ProviderRecord[]; consumers?: ConsumerRecord[]; traits?: string[] };
    this.providers.clear();
    this.consumers.clear();
    this.usages.clear();
    for (const rp of snap.providers ?? []) this.providers.set(rp.uuid, rp);
    for (const c of snap.consumers ?? []) {
      this.consumers.set(c.uuid, c);
      this.account(c.allocations, 1);
    }
    if (snap.traits) {
      this.traitList = [...snap.traits];
      this.traitSet.clear();
      for (const t of this.traitList) this.traitSet.add(t);
    }
  }

  private account(allocations: Record<string, Resources>, sign: 1 | -1): void {
    for (const [rpId, resources] of Object.entries(allocations)) {
      let used = this.usages.get(rpId);
      if (!used) {
        used = new Map();
        this.usages.set(rpId, used);
      }
      for (const [rc, n] of Object.entries(resources)) used.set(rc, (used.get(rc) ?? 0) + sign * n);
    }
  }

  private bump(rpId: string): void {
    const rp = this.providers.get(rpId);
    if (!rp) return;
    rp.generation += 1;
    rp.updated_at = Date.now();
  }
}
