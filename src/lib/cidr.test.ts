import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  cidrContains,
  cidrContainsCidr,
  compareIps,
  excludeCidrs,
  formatCidr,
  formatIp,
  ipVersion,
  isIPv4,
  isIPv6,
  isIPv6Like,
  parseCidr,
  parseIp,
} from './cidr.ts';

describe('cidr (Go net semantics)', () => {
  it('parses addresses as net.ParseIP', () => {
    assert.equal(parseIp('10.0.0.1')?.family, 4);
    assert.equal(parseIp('::ffff:10.0.0.1')?.family, 4);
    assert.equal(parseIp('2001:db8::1')?.family, 6);
    assert.equal(parseIp('::')?.family, 6);
    for (const bad of ['010.0.0.1', '1.2.3', '256.0.0.1', '2001:db8:::1', 'fe80::1%eth0', 'host']) {
      assert.equal(parseIp(bad), undefined, bad);
    }
    assert.equal(isIPv6Like('2001:db8::1'), true);
    assert.equal(isIPv6Like('10.0.0.1'), false);
    assert.equal(isIPv6Like('not-an-ip'), true, 'To4() of nil is nil');
  });

  it('parses CIDRs with host bits and tests membership per family', () => {
    const net = parseCidr('10.1.2.3/8')!;
    assert.equal(formatCidr(net), '10.0.0.0/8');
    assert.ok(cidrContains(net, parseIp('10.200.0.1')!));
    assert.ok(!cidrContains(net, parseIp('11.0.0.1')!));
    assert.ok(
      !cidrContains(parseCidr('::/0')!, parseIp('10.0.0.1')!),
      'an IPv6 network holds no IPv4 address',
    );
    assert.ok(cidrContains(parseCidr('::/0')!, parseIp('2001:db8::1')!));
    assert.equal(formatCidr(parseCidr('2001:DB8:0:0:1::5/64')!), '2001:db8::/64');
    assert.equal(parseCidr('10.0.0.0'), undefined);
    assert.equal(parseCidr('10.0.0.0/33'), undefined);
  });

  it('prints and orders addresses as Go', () => {
    assert.equal(formatIp(parseIp('2001:0db8:0000:0000:0000:ff00:0042:8329')!), '2001:db8::ff00:42:8329');
    assert.equal(formatIp(parseIp('2001:db8:0:1:0:0:0:1')!), '2001:db8:0:1::1');
    assert.equal(formatIp(parseIp('2001:db8:1:1:1:1:0:1')!), '2001:db8:1:1:1:1:0:1');
    assert.ok(compareIps(parseIp('10.0.0.2')!, parseIp('10.0.0.10')!) < 0);
    assert.ok(compareIps(parseIp('10.0.0.1')!, parseIp('2001:db8::1')!) < 0);
  });

  it('reads leading zeros as decimal only when sloppy (ParseIPSloppy, netaddr ZEROFILL)', () => {
    assert.equal(parseIp('010.0.0.1'), undefined);
    assert.equal(formatIp(parseIp('010.0.0.1', { sloppy: true })!), '10.0.0.1');
    assert.equal(formatIp(parseIp('::ffff:010.0.0.1', { sloppy: true })!), '10.0.0.1');
    assert.equal(parseCidr('010.0.0.0/8'), undefined);
    assert.equal(formatCidr(parseCidr('010.0.0.0/8', { sloppy: true })!), '10.0.0.0/8');
  });

  it('tells the family an address is written in, as net.isIP and Python do', () => {
    assert.equal(ipVersion('10.0.0.1'), 4);
    assert.equal(ipVersion('::ffff:10.0.0.1'), 6, 'written as IPv6, though Go sees IPv4');
    assert.equal(ipVersion('2001:db8::1'), 6);
    for (const bad of ['host', 'a:b:c', '[2001:db8::1]', '1.2.3.4::', 'fe80::1%eth0', '']) {
      assert.equal(ipVersion(bad), 0, bad);
    }
    assert.equal(isIPv4('10.0.0.1'), true);
    assert.equal(isIPv4('::ffff:10.0.0.1'), false);
    assert.equal(isIPv4('010.0.0.1'), false);
    assert.equal(isIPv4('010.0.0.1', { sloppy: true }), true);
    assert.equal(isIPv6('::ffff:10.0.0.1'), true);
    assert.equal(isIPv6('10.0.0.1'), false);
    assert.equal(isIPv6('not:an:ip'), false);
  });
});

describe('cidr exclusion (netaddr cidr_exclude, for all exceptions at once)', () => {
  const cidr = (t: string) => parseCidr(t)!;
  const exclude = (c: string, ...ex: string[]) => excludeCidrs(cidr(c), ex.map(cidr)).map(formatCidr);

  it('covers the network minus the exception with one network per bit of difference, in address order', () => {
    assert.deepEqual(exclude('10.0.0.0/24', '10.0.0.128/26'), ['10.0.0.0/25', '10.0.0.192/26']);
    assert.deepEqual(exclude('10.0.0.0/8', '10.0.0.0/10'), ['10.64.0.0/10', '10.128.0.0/9']);
    assert.deepEqual(exclude('10.0.0.0/30', '10.0.0.1/32'), ['10.0.0.0/32', '10.0.0.2/31']);
    assert.deepEqual(exclude('2001:db8::/32', '2001:db8:8000::/33'), ['2001:db8::/33']);
  });

  it('takes every exception out, not each one on its own', () => {
    assert.deepEqual(exclude('10.0.0.0/24', '10.0.0.0/26', '10.0.0.192/26'), [
      '10.0.0.64/26',
      '10.0.0.128/26',
    ]);
  });

  it('ignores an exception outside the network and drops the network an exception holds', () => {
    assert.deepEqual(exclude('10.0.0.0/24', '192.168.0.0/16'), ['10.0.0.0/24']);
    assert.deepEqual(exclude('10.0.0.0/24', '10.0.0.0/16'), []);
    assert.deepEqual(exclude('10.0.0.0/24', '10.0.0.0/24'), []);
    assert.deepEqual(exclude('10.0.0.0/24', '::/0'), ['10.0.0.0/24'], 'another family');
  });

  it('tells a network inside another', () => {
    assert.ok(cidrContainsCidr(cidr('10.0.0.0/8'), cidr('10.1.0.0/16')));
    assert.ok(cidrContainsCidr(cidr('10.0.0.0/8'), cidr('10.0.0.0/8')));
    assert.ok(!cidrContainsCidr(cidr('10.1.0.0/16'), cidr('10.0.0.0/8')));
    assert.ok(!cidrContainsCidr(cidr('10.0.0.0/8'), cidr('11.0.0.0/16')));
  });
});
