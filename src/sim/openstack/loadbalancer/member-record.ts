/**
 * How the emulator holds a member. A thousand Services over five thousand Nodes are 7.5 million
 * members in one process: each field is 8 bytes on the heap, so a member is a fixed-shape record of
 * the fields that differ from member to member, and what is the same for all of a pool's members or
 * rarely set is not repeated in each.
 * - pool_id and project_id come from the pool the member is in (Octavia makes a member its pool's
 *   project's, whatever the body says): one reference for both.
 * - the weight, backup, the monitor address and port, tags and a forced operating status are rarely
 *   set: they live in one shared default object until one of them is set.
 * - the creation number ordering members created in the same second is a field of the record,
 *   not a property added later (collection.ts).
 * Its wire and state-file shape is the plain MemberRecord: `toJSON` gives it, key for key as the
 * emulator has always persisted it.
 */
import { CREATION, creationNumber } from './collection.ts';
import type { MemberRecord, OperatingStatus, PoolRecord, ProvisioningStatus } from './model.ts';

/** The tags of every member without any: shared, so never mutated (writers replace the array). */
const NO_TAGS: string[] = Object.freeze([]) as unknown as string[];

interface Rare {
  readonly weight: number;
  readonly backup: boolean;
  readonly monitor_address: string | null;
  readonly monitor_port: number | null;
  readonly tags: string[];
  readonly forced: OperatingStatus | undefined;
}

const DEFAULTS: Rare = Object.freeze({
  weight: 1,
  backup: false,
  monitor_address: null,
  monitor_port: null,
  tags: NO_TAGS,
  forced: undefined,
});

const isDefault = (r: Rare): boolean =>
  r.weight === 1 &&
  !r.backup &&
  r.monitor_address === null &&
  r.monitor_port === null &&
  r.tags.length === 0 &&
  r.forced === undefined;

/** A member's fields but those its pool gives (pool_id, project_id). */
export type MemberFields = Omit<MemberRecord, 'pool_id' | 'project_id'>;

export class StoredMember implements MemberRecord {
  id: string;
  name: string;
  provisioning_status: ProvisioningStatus;
  admin_state_up: boolean;
  created_at: string;
  updated_at: string | null;
  address: string;
  protocol_port: number;
  subnet_id: string | null;
  /** The pool the member is in: its id and project are the member's. */
  readonly _pool: PoolRecord;
  private _rare: Rare = DEFAULTS;
  readonly [CREATION]: number;

  constructor(pool: PoolRecord, f: MemberFields) {
    this.id = f.id;
    this.name = f.name;
    this.provisioning_status = f.provisioning_status;
    this.admin_state_up = f.admin_state_up;
    this.created_at = f.created_at;
    this.updated_at = f.updated_at;
    this.address = f.address;
    this.protocol_port = f.protocol_port;
    this.subnet_id = f.subnet_id;
    this._pool = pool;
    this[CREATION] = creationNumber();
    // `??`: a state file of an older emulator may lack a field.
    this.setRare({
      weight: f.weight ?? 1,
      backup: f.backup ?? false,
      monitor_address: f.monitor_address ?? null,
      monitor_port: f.monitor_port ?? null,
      tags: (f.tags ?? []).length === 0 ? NO_TAGS : [...f.tags],
      forced: f._forced_operating_status ?? undefined,
    });
  }

  get pool_id(): string {
    return this._pool.id;
  }

  get project_id(): string {
    return this._pool.project_id;
  }

  get tags(): string[] {
    return this._rare.tags;
  }

  set tags(tags: string[]) {
    this.change('tags', tags.length === 0 ? NO_TAGS : tags);
  }

  get weight(): number {
    return this._rare.weight;
  }

  set weight(weight: number) {
    this.change('weight', weight);
  }

  get backup(): boolean {
    return this._rare.backup;
  }

  set backup(backup: boolean) {
    this.change('backup', backup);
  }

  get monitor_address(): string | null {
    return this._rare.monitor_address;
  }

  set monitor_address(monitor_address: string | null) {
    this.change('monitor_address', monitor_address);
  }

  get monitor_port(): number | null {
    return this._rare.monitor_port;
  }

  set monitor_port(monitor_port: number | null) {
    this.change('monitor_port', monitor_port);
  }

  get _forced_operating_status(): OperatingStatus | undefined {
    return this._rare.forced;
  }

  set _forced_operating_status(forced: OperatingStatus | undefined) {
    this.change('forced', forced);
  }

  /** The state file's shape (and the order of its keys) of a member. */
  toJSON(): MemberRecord {
    const out: MemberRecord = {
      id: this.id,
      name: this.name,
      project_id: this.project_id,
      provisioning_status: this.provisioning_status,
      admin_state_up: this.admin_state_up,
      created_at: this.created_at,
      updated_at: this.updated_at,
      tags: [...this.tags],
      pool_id: this.pool_id,
      address: this.address,
      protocol_port: this.protocol_port,
      weight: this.weight,
      backup: this.backup,
      subnet_id: this.subnet_id,
      monitor_address: this.monitor_address,
      monitor_port: this.monitor_port,
    };
    if (this._forced_operating_status) out._forced_operating_status = this._forced_operating_status;
    return out;
  }

  private change<K extends keyof Rare>(key: K, value: Rare[K]): void {
    // A batch update sets every member's fields, most to what they were: nothing is copied then.
    if (this._rare[key] !== value) this.setRare({ ...this._rare, [key]: value });
  }

  private setRare(rare: Rare): void {
    this._rare = isDefault(rare) ? DEFAULTS : Object.freeze(rare);
  }
}
