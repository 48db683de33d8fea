import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  backoffDelay,
  DEFAULT_RETRY,
  parseRetryAfter,
  retryableConnectionError,
  retryableStatus,
} from './retry.ts';

describe('retry rules', () => {
  it('retries 429 and 503 for any method, other 5xx but 501 only for GET, HEAD and DELETE', () => {
    for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      assert.ok(retryableStatus(m, 429) && retryableStatus(m, 503), m);
      assert.ok(!retryableStatus(m, 501) && !retryableStatus(m, 409) && !retryableStatus(m, 400), m);
    }
    assert.ok(retryableStatus('GET', 500) && retryableStatus('HEAD', 502) && retryableStatus('DELETE', 504));
    assert.ok(
      !retryableStatus('POST', 500) && !retryableStatus('PUT', 502) && !retryableStatus('PATCH', 504),
    );
  });

  it('retries connection failures for idempotent methods, refused connections for all, TLS failures never', () => {
    assert.ok(retryableConnectionError('GET', 'ECONNRESET'));
    assert.ok(!retryableConnectionError('POST', 'ECONNRESET'));
    assert.ok(retryableConnectionError('POST', 'ECONNREFUSED'));
    assert.ok(!retryableConnectionError('GET', 'SELF_SIGNED_CERT_IN_CHAIN'));
    assert.ok(!retryableConnectionError('GET', 'ERR_TLS_CERT_ALTNAME_INVALID'));
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(parseRetryAfter('2', now), 2000);
    assert.equal(parseRetryAfter('0.25', now), 250);
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now), 5000);
    assert.equal(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter(null, now), undefined);
  });

  it('backs off exponentially with full jitter, capped', () => {
    const top = (retry: number) => backoffDelay(retry, DEFAULT_RETRY, () => 0.999999);
    assert.deepEqual([1, 2, 3, 4, 5, 6, 40].map(top), [499, 999, 1999, 3999, 7999, 14999, 14999]);
    assert.equal(
      backoffDelay(3, DEFAULT_RETRY, () => 0),
      0,
    );
  });
});
