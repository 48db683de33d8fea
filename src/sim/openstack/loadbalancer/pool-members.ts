/**
 * One pool's members in (created_at, id) order, the order Octavia lists them in. The only place the
 * emulator keeps members: a member's URL names its pool, so none is looked up without it, and a pool
 * of a large cluster holds thousands (7.5 million across a thousand Services over five thousand
 * Nodes), so no index by id is kept beside the list — 37 bytes a member in a Map. A member is found
 * by id with one scan of its pool: the single-member calls (GET, PUT, DELETE, a list's marker) each
 * already cost as much (a create compares every member's address), and the ccm's batch PUT and
 * lists never look one up.
 */
import { compareCreated } from './collection.ts';
import type { MemberRecord } from './model.ts';

export class PoolMembers {
  /** Kept lazily as Collection does: a removal only counts the member as gone until the next ordered(). */
  private order: MemberRecord[] = [];
  private gone: Set<MemberRecord> | undefined;
  private sorted = true;

  get size(): number {
    return this.ordered().length;
  }

  add(member: MemberRecord): void {
    const last = this.order[this.order.length - 1];
    if (last !== undefined && compareCreated(last, member) > 0) this.sorted = false;
    this.order.push(member);
  }

  remove(member: MemberRecord): void {
    (this.gone ??= new Set()).add(member);
    // Removals one at a time across a long idle pool would pile up: compact once half are gone.
    if (this.gone.size * 2 > this.order.length) this.ordered();
  }

  get(id: string): MemberRecord | undefined {
    for (const m of this.order) if (m.id === id && !this.gone?.has(m)) return m;
    return undefined;
  }

  /** All members in (created_at, id) order; the array is shared, do not mutate it. */
  ordered(): readonly MemberRecord[] {
    const gone = this.gone;
    if (gone !== undefined) {
      this.order = this.order.filter((m) => !gone.has(m));
      this.gone = undefined;
    }
    if (!this.sorted) {
      this.order.sort(compareCreated);
      this.sorted = true;
    }
    return this.order;
  }
}
