/**
 * The resolve lookups (image, flavor, server group, network, subnet, security group by name or
 * filter) shared by every server of one identity for a short time: a hundred machines of one
 * template created together otherwise send the same five lists a hundred times, each answered
 * alike, and each holding a worker for its round trip. A lookup under way is shared too.
 *
 * Only answers are kept: a failed lookup (nothing matched, several did, no answer) is dropped at
 * once, so the object that fixes it is seen by the very next try. A kept answer is at most `ttlMs`
 * old: an image or network of the same name made or deleted meanwhile is seen after that.
 * Memory is bounded by `maxEntries` (the oldest go first).
 */

export interface LookupCacheOptions {
  /** How long an answer is used; default 10 s. */
  ttlMs?: number;
  /** Answers kept; default 1,000. */
  maxEntries?: number;
  now?: () => number;
}

interface Entry {
  value: Promise<string>;
  at: number;
}

export class LookupCache {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  /** Lookups sent (not answered from the cache): tests and the benchmark. */
  sent = 0;

  constructor(opts: LookupCacheOptions = {}) {
    this.ttlMs = Math.max(0, opts.ttlMs ?? 10_000);
    this.maxEntries = Math.max(1, opts.maxEntries ?? 1_000);
    this.now = opts.now ?? Date.now;
  }

  /** The answer for `key`: kept, under way, or from `lookup` now. */
  get(key: string, lookup: () => Promise<string>): Promise<string> {
    const now = this.now();
    const kept = this.entries.get(key);
    if (kept && now - kept.at < this.ttlMs) return kept.value;
    if (kept) this.entries.delete(key);
    this.sent++;
    const entry: Entry = { value: lookup(), at: now };
    this.entries.set(key, entry);
    entry.value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    while (this.entries.size > this.maxEntries)
      this.entries.delete(this.entries.keys().next().value as string);
    return entry.value;
  }
}
