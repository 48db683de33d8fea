/**
 * What the engine last confirmed about each pool's members, so that a pool showing no change since is
 * not read again. A pool of a large cluster holds one member per Node, thousands of records: every
 * ready reconcile read them all, to write nothing when a Service was woken by a Node change that left
 * its members alone, and to find again, after a burst of Nodes, the members it had read a minute before.
 *
 * A confirmation says: at this state of the pool (ACTIVE, its `updated_at`, the member ids it lists)
 * its members matched this desired set, none of them pending. Octavia locks a pool on every member
 * write (PENDING_UPDATE, then ACTIVE), which stamps its `updated_at`, and lists its member ids; so a
 * member added, removed or changed by anyone shows as a new pool state and the members are read
 * again. `updated_at` has a one-second resolution: a change begun and settled within the second of
 * the confirmation would not show, so a confirmation is trusted for `maxAgeMs` at most, after which
 * the members are read whatever the pool says.
 *
 * Held per pool: two digests and a time, never the members (a thousand Services over five thousand
 * Nodes are millions of member records).
 */
import { createHash } from 'node:crypto';
import type { Member } from '../../loadbalancer/v2/members.ts';
import type { Pool } from '../../loadbalancer/v2/pools.ts';
import { memberKey, uniqueMembers } from './build.ts';
import type { DesiredMember } from './types.ts';

/** How long a confirmation is trusted without a read, whatever the pool shows (10 min). */
export const CONFIRMED_MEMBERS_MAX_AGE_MS = 600_000;

interface Confirmation {
  /** The pool's state when confirmed: see poolState. */
  pool: string;
  /** The desired members that matched: see desiredDigest. */
  desired: string;
  at: number;
}

const digest = (parts: readonly string[]): string => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\n');
  return h.digest('base64');
};

/** ACTIVE, when, and which members: what any member write changes. */
function poolState(pool: Pool): string | undefined {
  if (pool.provisioning_status !== 'ACTIVE' || !Array.isArray(pool.members)) return undefined;
  return `${pool.updated_at ?? ''}|${digest(pool.members.map((m) => m.id))}`;
}

/**
 * The desired set as planMembers compares it (plan.ts memberDiff): by address and port, later
 * duplicates winning, with the name (when names are compared), weight, monitor and backup; the subnet
 * is not compared there, so it is not here.
 */
function desiredDigest(desired: readonly DesiredMember[], names: boolean): string {
  // A caller that builds its desired members once per Node set (the ccm) hands the same frozen array
  // to every Service's reconcile: its digest is worked out once.
  const frozen = Object.isFrozen(desired);
  const key = names ? 'names' : 'no-names';
  const known = frozen ? digests.get(desired)?.get(key) : undefined;
  if (known !== undefined) return known;
  const out = computeDigest(desired, names);
  if (frozen) {
    let byRule = digests.get(desired);
    if (!byRule) digests.set(desired, (byRule = new Map<string, string>()));
    byRule.set(key, out);
  }
  return out;
}

const digests = new WeakMap<readonly DesiredMember[], Map<string, string>>();

function computeDigest(desired: readonly DesiredMember[], names: boolean): string {
  return digest(
    uniqueMembers(desired)
      .map((d) =>
        [
          memberKey(d.address, d.port),
          names && d.name !== undefined ? d.name : '',
          d.weight ?? 1,
          d.monitorPort ?? '',
          d.monitorAddress ?? '',
          d.backup ?? false,
        ].join('|'),
      )
      .sort(),
  );
}

export class ConfirmedMembers {
  private readonly byPool = new Map<string, Confirmation>();
  private confirms = 0;
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(now: () => number, maxAgeMs = CONFIRMED_MEMBERS_MAX_AGE_MS) {
    this.now = now;
    this.maxAgeMs = maxAgeMs;
  }

  /** Whether the pool is as it was when its members were last confirmed (they need not be read). */
  unchanged(pool: Pool): boolean {
    const c = this.byPool.get(pool.id);
    if (!c) return false;
    if (this.now() - c.at > this.maxAgeMs || c.pool !== poolState(pool)) {
      this.byPool.delete(pool.id);
      return false;
    }
    return true;
  }

  /**
   * Before the pool itself is read: whether it has a fresh confirmation, so that its members are
   * likely not to be read (`unchanged` decides once the pool is listed).
   */
  known(poolId: string): boolean {
    const c = this.byPool.get(poolId);
    return c !== undefined && this.now() - c.at <= this.maxAgeMs;
  }

  /** For a pool `unchanged` said need not be read: whether `desired` is the set it matched. */
  matches(pool: Pool, desired: readonly DesiredMember[], names: boolean): boolean {
    return this.byPool.get(pool.id)?.desired === desiredDigest(desired, names);
  }

  /** `current`, just read, matched `desired`: remembered while the pool stays as it is now. */
  confirm(pool: Pool, current: readonly Member[], desired: readonly DesiredMember[], names: boolean): void {
    const state = poolState(pool);
    if (state === undefined || current.some((m) => m.provisioning_status.startsWith('PENDING_'))) {
      this.byPool.delete(pool.id);
      return;
    }
    this.prune();
    this.byPool.set(pool.id, { pool: state, desired: desiredDigest(desired, names), at: this.now() });
  }

  get size(): number {
    return this.byPool.size;
  }

  /** Confirmations past their age (pools deleted since, Services gone) are dropped now and then. */
  private prune(): void {
    if (++this.confirms % 1024 !== 0) return;
    const now = this.now();
    for (const [id, c] of this.byPool) if (now - c.at > this.maxAgeMs) this.byPool.delete(id);
  }
}
