import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  parseProviderId,
  ProviderIdError,
  providerId,
  regionalProviderIdFromEnv,
  serverIdForRegion,
} from './provider-id.ts';

describe('providerID', () => {
  it('writes the plain and the regional form', () => {
    assert.equal(providerId('f00'), 'openstack:///f00');
    assert.equal(providerId('f00', 'RegionOne'), 'openstack://RegionOne/f00');
  });

  it("parses what OCCM's instanceIDFromProviderID accepts", () => {
    assert.deepEqual(parseProviderId('openstack:///f00'), { serverId: 'f00', region: '' });
    assert.deepEqual(parseProviderId('openstack://us-east-1/f00'), { serverId: 'f00', region: 'us-east-1' });
    assert.deepEqual(parseProviderId('/f00'), { serverId: 'f00', region: '' });
    assert.deepEqual(parseProviderId('us-east-1/f00'), { serverId: 'f00', region: 'us-east-1' });
  });

  it('refuses the rest with OCCM wording, a bare id included', () => {
    for (const bad of ['f00', 'openstack://us-east-1-f00', 'aws:///i-1', 'openstack:///a/b', '']) {
      assert.throws(
        () => parseProviderId(bad),
        (err: unknown) => err instanceof ProviderIdError && /didn't match expected format/.test(err.message),
        bad,
      );
    }
  });

  it('checks the region of a regional providerID', () => {
    assert.equal(serverIdForRegion('openstack:///f00', 'RegionOne'), 'f00');
    assert.equal(serverIdForRegion('openstack://RegionOne/f00', 'RegionOne'), 'f00');
    assert.throws(
      () => serverIdForRegion('openstack://RegionTwo/f00', 'RegionOne'),
      /didn't match supported region "RegionOne"/,
    );
  });

  it('turns the regional form on only for OS_CCM_REGIONAL=true', () => {
    assert.equal(regionalProviderIdFromEnv({ OS_CCM_REGIONAL: 'true' }), true);
    assert.equal(regionalProviderIdFromEnv({ OS_CCM_REGIONAL: 'TRUE' }), false);
    assert.equal(regionalProviderIdFromEnv({}), false);
  });
});
