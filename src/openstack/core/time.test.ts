import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseOpenStackTime } from './time.ts';

describe('OpenStack times', () => {
  it('reads every service’s format as UTC', () => {
    const t = Date.UTC(2024, 0, 1);
    assert.equal(parseOpenStackTime('2024-01-01T00:00:00Z'), t, 'Nova, Neutron');
    assert.equal(parseOpenStackTime('2024-01-01T00:00:00'), t, 'Octavia');
    assert.equal(parseOpenStackTime('2024-01-01T00:00:00.000000'), t, 'Cinder');
    assert.equal(parseOpenStackTime('2024-01-01T01:00:00+01:00'), t);
  });

  it('gives undefined for a missing or unreadable time', () => {
    assert.equal(parseOpenStackTime(null), undefined);
    assert.equal(parseOpenStackTime(undefined), undefined);
    assert.equal(parseOpenStackTime(''), undefined);
    assert.equal(parseOpenStackTime('yesterday'), undefined);
  });
});
