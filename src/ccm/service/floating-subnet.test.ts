import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  floatingSubnetSpec,
  globToRegExp,
  matchesSubnetName,
  matchesSubnetTags,
  subnetNamePattern,
  subnetTagFilter,
  subnetTagQuery,
} from './floating-subnet.ts';

describe('floating subnet spec', () => {
  it('prefers the id, else a pattern and tags', () => {
    assert.deepEqual(floatingSubnetSpec({ subnetId: 's1', subnet: 'x' }), { kind: 'id', subnetId: 's1' });
    assert.equal(floatingSubnetSpec({}), undefined);
    assert.equal(floatingSubnetSpec({ tags: 'a' })?.kind, 'match');
  });

  it('matches names by glob or ~regex, whole name, ! negating', () => {
    const glob = subnetNamePattern('public-*');
    assert.ok(matchesSubnetName(glob, 'public-1'));
    assert.ok(!matchesSubnetName(glob, 'my-public-1'));
    assert.ok(matchesSubnetName(subnetNamePattern('ext-{a,b}?'), 'ext-b1'));
    assert.ok(matchesSubnetName(subnetNamePattern('~pub-[0-9]+'), 'pub-12'));
    assert.ok(
      !matchesSubnetName(subnetNamePattern('~pub-[0-9]+'), 'pub-12x'),
      'the match must be the whole name',
    );
    assert.ok(matchesSubnetName(subnetNamePattern('!~internal.*'), 'public'));
    assert.ok(!matchesSubnetName(subnetNamePattern('!~internal.*'), 'internal-1'));
    assert.ok(matchesSubnetName(subnetNamePattern('~x'), ''), 'OCCM: an unnamed subnet matches ("" == "")');
    assert.throws(() => subnetNamePattern('~('), /invalid subnet regexp pattern "\("/);
    assert.equal(globToRegExp('a.b*'), '^a\\.b[^/]*$');
  });

  it('filters tags as tweakListOpts and subnetTagMatcher', () => {
    const any = subnetTagFilter('a, b');
    assert.deepEqual(subnetTagQuery(any), { 'tags-any': 'a,b' });
    assert.deepEqual(subnetTagQuery(subnetTagFilter('&a,b')), { tags: 'a,b' });
    assert.deepEqual(subnetTagQuery(subnetTagFilter('!a,b')), { 'not-tags': 'a,b' });
    assert.deepEqual(subnetTagQuery(subnetTagFilter('!&a,b')), { 'not-tags-any': 'a,b' });
    assert.ok(matchesSubnetTags(any, ['b']));
    assert.ok(!matchesSubnetTags(any, ['c']));
    assert.ok(matchesSubnetTags(subnetTagFilter('&a,b'), ['a', 'b']));
    assert.ok(!matchesSubnetTags(subnetTagFilter('&a,b'), ['a']));
    assert.ok(matchesSubnetTags(subnetTagFilter('!a'), ['c']));
  });
});
