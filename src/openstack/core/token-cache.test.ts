import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { needsRefresh, TokenCache, type CachedToken } from './token-cache.ts';

const HOUR = 3_600_000;
const token = (value: string, issuedAt: number, lifetime = HOUR): CachedToken => ({
  value,
  issuedAt,
  expiresAt: issuedAt + lifetime,
  token: { methods: ['password'], expires_at: '', issued_at: '', user: { id: 'u' } },
});
const policy = { minMarginMs: 5 * 60_000, fraction: 0.1 };

describe('token cache', () => {
  it('refreshes once less than max(5 min, 10 % of the lifetime) remains', () => {
    const t = token('a', 0);
    assert.ok(!needsRefresh(t, HOUR - 6 * 60_000 - 1, policy));
    assert.ok(needsRefresh(t, HOUR - 6 * 60_000, policy));
    const short = token('b', 0, 20 * 60_000);
    assert.ok(!needsRefresh(short, 15 * 60_000 - 1, policy) && needsRefresh(short, 15 * 60_000, policy));
  });

  it('issues once for many concurrent callers, and reuses the token until refresh is due', async () => {
    const cache = new TokenCache();
    let now = 0;
    let issued = 0;
    const issue = async () => {
      issued++;
      await new Promise((r) => setTimeout(r, 5));
      return token(`t${issued}`, now);
    };
    const req = { now: () => now, refresh: policy };
    const got = await Promise.all(Array.from({ length: 50 }, () => cache.get('k', issue, req)));
    assert.equal(issued, 1);
    assert.ok(got.every((t) => t.value === 't1'));
    now = HOUR - 6 * 60_000;
    assert.equal((await cache.get('k', issue, req)).value, 't2');
  });

  it('keeps using a valid token when a refresh fails, but not an expired one', async () => {
    const cache = new TokenCache();
    let now = 0;
    const stale: unknown[] = [];
    const req = { now: () => now, refresh: policy, onStaleFallback: (e: unknown) => stale.push(e) };
    await cache.get('k', () => Promise.resolve(token('t1', 0)), req);
    now = HOUR - 60_000;
    const failing = () => Promise.reject(new Error('keystone down'));
    assert.equal((await cache.get('k', failing, req)).value, 't1');
    assert.equal(stale.length, 1);
    now = HOUR;
    await assert.rejects(cache.get('k', failing, req), /keystone down/);
  });

  it('drops a token only if it is still the one that got the 401', async () => {
    const cache = new TokenCache();
    const req = { now: () => 0, refresh: policy };
    await cache.get('k', () => Promise.resolve(token('t1', 0)), req);
    assert.ok(!cache.invalidate('k', 'other'));
    assert.ok(cache.invalidate('k', 't1'));
    assert.ok(!cache.invalidate('k', 't1'));
    assert.equal(cache.peek('k'), undefined);
  });

  it('lets a caller stop waiting without failing the issue for the others', async () => {
    const cache = new TokenCache();
    const abort = new AbortController();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const issue = async () => {
      await gate;
      return token('t1', 0);
    };
    const quitter = cache.get('k', issue, { now: () => 0, refresh: policy, signal: abort.signal });
    const patient = cache.get('k', issue, { now: () => 0, refresh: policy });
    abort.abort(new Error('shutting down'));
    await assert.rejects(quitter, /shutting down/);
    release();
    assert.equal((await patient).value, 't1');
  });

  it('stays bounded', async () => {
    const cache = new TokenCache({ maxEntries: 3 });
    for (const k of ['a', 'b', 'c', 'd', 'e'])
      await cache.get(k, () => Promise.resolve(token(k, 0)), { now: () => 0, refresh: policy });
    assert.equal(cache.size, 3);
    assert.equal(cache.peek('a'), undefined);
    assert.equal(cache.peek('e')?.value, 'e');
  });
});
