/**
 * The bindings in real network namespaces: a node namespace plays the host, pod namespaces the
 * sandboxes (testing/netns.ts). The veth binding end to end; the vlan binding up to the kernel's
 * answer (this machine's kernel has no 802.1Q; on one that has, the same test checks the interface).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { deleteNetns, netnsBed, skipWithout, skipWithoutNetns } from '../testing/netns.ts';
import { hostEndName, VethBinding } from './veth.ts';
import { vlanLinkName, VlanBinding } from './vlan.ts';
import { BindingCheckError, BindingUnsupportedError, type PodInterface } from './types.ts';

function pod(n: number, ifname = 'eth0'): PodInterface {
  return {
    ifname,
    mac: `fa:16:3e:00:00:0${n}`,
    mtu: 1400,
    vlanId: 100 + n,
    addresses: [{ ip: `10.20.0.${10 + n}`, prefixLength: 24, gateway: '10.20.0.1' }],
    routes: [
      { dst: '0.0.0.0/0', gw: '10.20.0.1' },
      { dst: '192.168.50.0/24', gw: '10.20.0.254' },
    ],
    dns: { nameservers: [] },
  };
}

const BRIDGE = 'kuryrtest0';

describe('veth binding in network namespaces', () => {
  it('ADD gives the pod its interface, MAC, MTU, address and routes; CHECK passes; a second ADD changes nothing', async (t) => {
    if (skipWithoutNetns(t)) return;
    const bed = netnsBed(t);
    const netns = bed.pod();
    const binding = new VethBinding({ bridge: BRIDGE, ip: bed.ip });
    const iface = pod(1);
    const sandbox = { netns, containerId: 'c0ffee01' };

    await binding.connect(iface, sandbox);

    const link = await bed.ip.link('eth0', netns);
    assert.ok(link, 'eth0 in the pod');
    assert.equal(link.address, iface.mac);
    assert.equal(link.mtu, 1400);
    assert.ok(link.flags?.includes('UP'));
    const addrs = await bed.ip.addresses('eth0', netns);
    assert.deepEqual(
      addrs.map((a) => `${a.local}/${a.prefixlen}`),
      ['10.20.0.11/24'],
    );
    const routes = await bed.ip.routes(4, netns);
    assert.ok(routes.some((r) => r.dst === 'default' && r.gateway === '10.20.0.1' && r.dev === 'eth0'));
    assert.ok(routes.some((r) => r.dst === '192.168.50.0/24' && r.gateway === '10.20.0.254'));
    const host = await bed.ip.link(hostEndName('c0ffee01', 'eth0'));
    assert.equal(host?.master, BRIDGE, 'the host end is on the bridge');
    assert.ok(host.flags?.includes('UP'));
    assert.ok(!(await bed.ip.link('eth0')), 'nothing named eth0 was left on the host');

    await binding.check(iface, sandbox);

    await binding.connect(iface, sandbox);
    const again = await bed.ip.link('eth0', netns);
    assert.equal(again?.ifindex, link.ifindex, 'the same interface, not a new one');
    assert.deepEqual(
      (await bed.ip.addresses('eth0', netns)).map((a) => a.local),
      ['10.20.0.11'],
    );
    const hostEnds = (await bed.ip.links()).filter((l) => l.ifname.startsWith('kv'));
    assert.equal(hostEnds.length, 1, 'one host end after two ADDs');
    await binding.check(iface, sandbox);
  });

  it('CHECK names what differs: a removed address, a changed MAC', async (t) => {
    if (skipWithoutNetns(t)) return;
    const bed = netnsBed(t);
    const netns = bed.pod();
    const binding = new VethBinding({ bridge: BRIDGE, ip: bed.ip });
    const iface = pod(2);
    const sandbox = { netns, containerId: 'c0ffee02' };
    await binding.connect(iface, sandbox);

    await assert.rejects(
      binding.check({ ...iface, mac: 'fa:16:3e:ff:ff:ff' }, sandbox),
      /MAC is fa:16:3e:00:00:02/,
    );
    bed.exec(netns, ['ip', 'address', 'del', '10.20.0.12/24', 'dev', 'eth0']);
    await assert.rejects(
      binding.check(iface, sandbox),
      (err) => err instanceof BindingCheckError && /address 10\.20\.0\.12\/24 is missing/.test(err.message),
    );
    // ADD again repairs it.
    await binding.connect(iface, sandbox);
    await binding.check(iface, sandbox);
  });

  it('DEL removes the interface and its host end; DEL again, or after the namespace is gone, succeeds', async (t) => {
    if (skipWithoutNetns(t)) return;
    const bed = netnsBed(t);
    const netns = bed.pod();
    const binding = new VethBinding({ bridge: BRIDGE, ip: bed.ip });
    const sandbox = { netns, containerId: 'c0ffee03' };
    await binding.connect(pod(3), sandbox);

    await binding.disconnect('eth0', sandbox);
    assert.equal(await bed.ip.link('eth0', netns), undefined);
    assert.equal(await bed.ip.link(hostEndName('c0ffee03', 'eth0')), undefined);
    await binding.disconnect('eth0', sandbox);
    await assert.rejects(binding.check(pod(3), sandbox), /no such interface/);

    await binding.connect(pod(3), sandbox);
    deleteNetns(netns);
    await binding.disconnect('eth0', sandbox);
    assert.equal(await bed.ip.link(hostEndName('c0ffee03', 'eth0')), undefined);
  });

  it('two pods on one host bridge reach each other by ping', async (t) => {
    if (skipWithoutNetns(t) || skipWithout(t, 'ping')) return;
    const bed = netnsBed(t);
    const binding = new VethBinding({ bridge: BRIDGE, ip: bed.ip });
    const a = bed.pod();
    const b = bed.pod();
    await binding.connect(pod(4), { netns: a, containerId: 'c0ffee04' });
    await binding.connect(pod(5), { netns: b, containerId: 'c0ffee05' });

    const out = bed.exec(a, ['ping', '-c', '2', '-W', '5', '10.20.0.15']);
    assert.match(out, / 0% packet loss/);
    assert.match(bed.exec(b, ['ping', '-c', '1', '-W', '5', '10.20.0.14']), / 0% packet loss/);
  });

  it('an ADD after a daemon was killed half way replaces the pair it left on the host', async (t) => {
    if (skipWithoutNetns(t)) return;
    const bed = netnsBed(t);
    const netns = bed.pod();
    const binding = new VethBinding({ bridge: BRIDGE, ip: bed.ip });
    const host = hostEndName('c0ffee09', 'eth0');
    // Killed after `ip link add`, before the pod end moved: both ends still on the host.
    bed.exec(bed.node, [
      'ip',
      'link',
      'add',
      'name',
      host,
      'type',
      'veth',
      'peer',
      'name',
      `kp${host.slice(2)}`,
    ]);

    await binding.connect(pod(9), { netns, containerId: 'c0ffee09' });
    await binding.check(pod(9), { netns, containerId: 'c0ffee09' });
    assert.deepEqual(
      (await bed.ip.links()).map((l) => l.ifname).filter((n) => /^k[vp]/.test(n)),
      [host],
      'one host end, no pod end left on the host',
    );
  });

  it('an ADD that fails half way leaves nothing behind', async (t) => {
    if (skipWithoutNetns(t)) return;
    const bed = netnsBed(t);
    const netns = bed.pod();
    const binding = new VethBinding({ bridge: BRIDGE, ip: bed.ip });
    // A route through a gateway outside every subnet of the pod is refused by the kernel.
    const bad = { ...pod(6), routes: [{ dst: '192.168.60.0/24', gw: '172.31.0.1' }] };
    await assert.rejects(binding.connect(bad, { netns, containerId: 'c0ffee06' }), /route/);
    assert.deepEqual(
      (await bed.ip.links(netns)).map((l) => l.ifname),
      ['lo'],
    );
    assert.equal(await bed.ip.link(hostEndName('c0ffee06', 'eth0')), undefined);
  });
});

describe('vlan binding in network namespaces', () => {
  it('creates <link_iface>.<vlan id> in the pod, or says clearly that the kernel has no 802.1Q and leaves nothing', async (t) => {
    if (skipWithoutNetns(t)) return;
    const bed = netnsBed(t);
    // The trunk parent's link of the "VM": one end of a veth pair in the node namespace.
    execFileSync('nsenter', [
      `--net=${bed.node}`,
      'ip',
      'link',
      'add',
      'trunk0',
      'type',
      'veth',
      'peer',
      'name',
      'trunk0p',
    ]);
    const netns = bed.pod();
    const binding = new VlanBinding({ linkIface: 'trunk0', ip: bed.ip });
    const iface = pod(7);
    const sandbox = { netns, containerId: 'c0ffee07' };
    const before = (await bed.ip.links()).map((l) => l.ifname).sort();

    if (bed.kernelHasVlan()) {
      process.stderr.write('vlan binding: this kernel has 802.1Q; checking the interface end to end\n');
      await binding.connect(iface, sandbox);
      await binding.check(iface, sandbox);
      const link = await bed.ip.linkDetails('eth0', netns);
      assert.equal(link?.linkinfo?.info_kind, 'vlan');
      assert.equal(link.linkinfo.info_data?.id, 107);
      await binding.disconnect('eth0', sandbox);
      assert.equal(await bed.ip.link('eth0', netns), undefined);
    } else {
      await assert.rejects(binding.connect(iface, sandbox), (err) => {
        assert.ok(err instanceof BindingUnsupportedError, String(err));
        assert.match(err.message, /cannot create 802\.1Q VLAN devices/);
        assert.match(err.message, /trunk0\.107/);
        assert.match(err.fix, /modprobe 8021q/);
        assert.match(err.fix, /default_driver = veth/);
        return true;
      });
    }
    assert.deepEqual((await bed.ip.links()).map((l) => l.ifname).sort(), before, 'the host as it was');
    assert.deepEqual(
      (await bed.ip.links(netns)).map((l) => l.ifname),
      ['lo'],
    );
  });

  it('a missing link_iface is named, with the option to set', async (t) => {
    if (skipWithoutNetns(t)) return;
    const bed = netnsBed(t);
    const netns = bed.pod();
    const binding = new VlanBinding({ linkIface: 'nosuch0', ip: bed.ip });
    await assert.rejects(
      binding.connect(pod(8), { netns, containerId: 'c0ffee08' }),
      (err) =>
        err instanceof BindingUnsupportedError &&
        /link_iface nosuch0/.test(err.message) &&
        /\[binding\] link_iface/.test(err.fix),
    );
  });

  it('names the sub-interface <link>.<id>, shortened to fit IFNAMSIZ', () => {
    assert.equal(vlanLinkName('ens3', 4094), 'ens3.4094');
    assert.equal(vlanLinkName('enp0s31f6abcdef', 7).length <= 15, true);
  });
});
