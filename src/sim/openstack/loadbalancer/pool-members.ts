/**
 * One pool's members in (created_at, id) order, the order Octavia lists them in. The only place the
 * emulator keeps members: a member's URL names its pool, so none is looked up without it, and a pool
 * of a large cluster holds thousands (7.5 million across a thousand Services over five thousand
 * Nodes), so no index by id is kept beside the list — 37 bytes a member in a Map. A member is found
 * by id with one scan of its pool: the single-member calls (GET, PUT, DELETE, a list's marker) each
 * already cost as much (a create compares every member's address), and the ccm's batch PUT and
 * lists never look one up.
 */
import { CreationOrder } from './collection.ts';
import type { MemberRecord } from './model.ts';

export class PoolMembers {
  /** A removal only counts the member as gone until the next ordered() drops it. */
  private readonly order = new CreationOrder<MemberRecord>();
  private gone: Set<MemberRecord> | undefined;

  get size(): number {
    return this.ordered().length;
  }

  add(member: MemberRecord): void {
    this.order.append(member);
  }

  remove(member: MemberRecord): void {
    (this.gone ??= new Set()).add(member);
    // Removals one at a time across a long idle pool would pile up: compact once half are gone.
    if (this.gone.size * 2 > this.order.length) this.ordered();
  }

  get(id: string): MemberRecord | undefined {
    return this.order.find((m) => m.id === id && !this.gone?.has(m));
  }

  /** All members in (created_at, id) order; the array is shared, do not mutate it. */
  ordered(): readonly MemberRecord[] {
    const gone = this.gone;
    if (gone !== undefined) {
      this.order.compact((m) => !gone.has(m));
      this.gone = undefined;
    }
    return this.order.ordered();
  }
}
