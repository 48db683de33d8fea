/**
 * The lookups of a spec against the emulator: a filter matching one object resolves to its id, none
 * is a DependencyError naming the filter, several is one listing every id; specs that cannot work
 * are refused before any call. And the pure request builders: the port body and Nova's request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ServerEngine } from './engine.ts';
import { DependencyError } from './errors.ts';
import { LookupCache } from './lookups.ts';
import { portCreateBody } from './ports.ts';
import { resolveServerSpec } from './resolve.ts';
import { serverCreateRequest } from './server.ts';
import { BACKOFF, census, machineSpec, openServerWorld, type ServerWorld } from './testing/fixtures.ts';
import type { ResolvedPortSpec, ServerSpec } from './types.ts';

async function dependencyError(p: Promise<unknown>): Promise<DependencyError> {
  try {
    await p;
  } catch (err) {
    if (DependencyError.is(err)) return err;
    throw err;
  }
  assert.fail('resolved, but a DependencyError was expected');
}

describe('resolveServerSpec', () => {
  let w: ServerWorld;
  const spec = (over: Partial<ServerSpec>): ServerSpec => ({ ...machineSpec('rs'), ...over });

  before(async () => {
    w = await openServerWorld();
    // Two networks and two security groups of one name; a second image tagged like the first.
    await w.os.network.networks.create({ name: 'twin' });
    await w.os.network.networks.create({ name: 'twin' });
    await w.os.network.securityGroups.create({ name: 'twin-sg' });
    await w.os.network.securityGroups.create({ name: 'twin-sg' });
  });
  after(async () => {
    await w?.close();
  });

  it('one match each: image, flavor, server group, networks, subnets, security groups', async () => {
    const images = await w.os.image.images.list({ name: 'cirros-0.6.2-x86_64-disk' }).all();
    const r = await resolveServerSpec(w.os, machineSpec('rs'));
    assert.equal(r.imageID, images[0]!.id);
    assert.equal(r.flavorID, '1');
    assert.equal(r.serverGroupID, w.serverGroupId);
    assert.deepEqual(
      r.ports.map((p) => ({ name: p.name, net: p.networkID, sgs: p.securityGroups, trunk: p.trunk })),
      [
        { name: 'rs-0', net: w.network.id, sgs: [w.securityGroup.id], trunk: false },
        { name: 'rs-pods', net: w.trunkNetwork.id, sgs: [w.securityGroup.id], trunk: true },
      ],
    );
    assert.deepEqual(r.ports[0]!.fixedIPs, [{ subnet: w.subnet.id }]);
    assert.deepEqual(r.ports[1]!.tags, ['cluster-test']);
    assert.deepEqual(r.volumes, [
      { name: 'rs-root', root: true, sizeGiB: 2, availabilityZone: 'nova' },
      { name: 'rs-etcd', root: false, sizeGiB: 1, tag: 'etcd', availabilityZone: 'nova' },
    ]);
  });

  it('ids are taken as given, without a call', async () => {
    w.sim.cloud.stats.reset();
    const r = await resolveServerSpec(
      w.os,
      spec({
        image: { id: 'img-1' },
        flavor: { id: 'fl-1' },
        serverGroup: { id: 'sg-1' },
        securityGroups: [{ id: 'secgroup-1' }],
        ports: [{ network: { id: 'net-1' }, fixedIPs: [{ subnet: { id: 'sub-1' }, ipAddress: '10.0.0.5' }] }],
      }),
    );
    assert.deepEqual(
      { ...r, ports: r.ports.map((p) => [p.networkID, p.fixedIPs, p.securityGroups]) },
      {
        imageID: 'img-1',
        flavorID: 'fl-1',
        serverGroupID: 'sg-1',
        ports: [['net-1', [{ subnet: 'sub-1', ipAddress: '10.0.0.5' }], ['secgroup-1']]],
        volumes: r.volumes,
      },
    );
    const ops = Object.values(w.sim.cloud.stats.snapshot().services).flatMap((svc) =>
      Object.entries(svc?.operations ?? {}).filter(([, o]) => o.count > 0),
    );
    assert.deepEqual(ops, []);
  });

  it("with the identity's LookupCache, a second server of the same spec resolves without a call", async () => {
    const lookups = new LookupCache();
    const reads = () => {
      let n = 0;
      for (const svc of Object.values(w.sim.cloud.stats.snapshot().services))
        for (const [op, o] of Object.entries(svc?.operations ?? {})) if (op.startsWith('GET ')) n += o.count;
      return n;
    };
    w.sim.cloud.stats.reset();
    const first = await resolveServerSpec(w.os, machineSpec('rc-1'), undefined, lookups);
    const afterFirst = reads();
    assert.ok(
      afterFirst >= 6,
      `image, flavor, server group, networks, subnet, security group: ${afterFirst}`,
    );
    const second = await resolveServerSpec(w.os, machineSpec('rc-2'), undefined, lookups);
    assert.equal(reads(), afterFirst, 'the second resolve is answered from the cache');
    assert.equal(second.imageID, first.imageID);
    assert.deepEqual(
      second.ports.map((p) => [p.networkID, p.fixedIPs, p.securityGroups]),
      first.ports.map((p) => [p.networkID, p.fixedIPs, p.securityGroups]),
    );
    assert.deepEqual(
      second.ports.map((p) => p.name),
      ['rc-2-0', 'rc-2-pods'],
      'names stay per server',
    );
  });

  it('a failed lookup is not kept: the network made after it is found by the next resolve', async () => {
    const lookups = new LookupCache();
    const late = spec({ ports: [{ network: { filter: { name: 'made-late' } } }] });
    const err = await dependencyError(resolveServerSpec(w.os, late, undefined, lookups));
    assert.equal(err.resource, 'network');
    const net = await w.os.network.networks.create({ name: 'made-late' });
    const r = await resolveServerSpec(w.os, late, undefined, lookups);
    assert.equal(r.ports[0]!.networkID, net.id);
  });

  it('a kept answer expires after its time', async () => {
    let now = 0;
    const lookups = new LookupCache({ ttlMs: 1_000, now: () => now });
    const answers = ['a', 'b'];
    const lookup = () => Promise.resolve(answers.shift()!);
    assert.equal(await lookups.get('k', lookup), 'a');
    now = 999;
    assert.equal(await lookups.get('k', lookup), 'a');
    now = 1_000;
    assert.equal(await lookups.get('k', lookup), 'b');
    assert.equal(lookups.sent, 2);
  });

  it('no match names the filter', async () => {
    const cases: [Partial<ServerSpec>, string, RegExp][] = [
      [{ image: { filter: { name: 'nope' } } }, 'image', /no image matches filter \{name: "nope"\}/],
      [{ flavor: { name: 'm9.huge' } }, 'flavor', /no flavor is named "m9.huge"/],
      [{ serverGroup: { filter: { name: 'nope' } } }, 'server group', /no server group matches/],
      [
        { ports: [{ network: { filter: { tags: ['nope'] } } }] },
        'network',
        /no network matches filter \{tags: \["nope"\]\}/,
      ],
      [
        {
          ports: [
            { network: { id: w.network.id }, fixedIPs: [{ subnet: { filter: { cidr: '10.99.0.0/24' } } }] },
          ],
        },
        'subnet',
        /no subnet matches .* on network/,
      ],
      [{ securityGroups: [{ filter: { name: 'nope' } }] }, 'security group', /no security group matches/],
    ];
    for (const [over, resource, message] of cases) {
      const err = await dependencyError(resolveServerSpec(w.os, spec(over)));
      assert.equal(err.resource, resource);
      assert.equal(err.problem, 'NotFound');
      assert.equal(err.terminal, false, 'a missing dependency may appear');
      assert.match(err.message, message);
    }
  });

  it('several matches are ambiguous, listing every id', async () => {
    const twins = await w.os.network.networks.list({ name: 'twin' }).all();
    const err = await dependencyError(
      resolveServerSpec(w.os, spec({ ports: [{ network: { filter: { name: 'twin' } } }] })),
    );
    assert.equal(err.problem, 'Ambiguous');
    assert.deepEqual([...err.ids].sort(), twins.map((n) => n.id).sort());
    for (const n of twins) assert.ok(err.message.includes(n.id));

    const sg = await dependencyError(
      resolveServerSpec(w.os, spec({ securityGroups: [{ filter: { name: 'twin-sg' } }] })),
    );
    assert.equal(sg.resource, 'security group');
    assert.equal(sg.ids.length, 2);
  });

  it('a port without a network takes it from its fixed IPs’ subnets, as CAPO does', async () => {
    const byFilter = await resolveServerSpec(
      w.os,
      spec({ ports: [{ fixedIPs: [{ subnet: { filter: { name: 'machines-v4' } } }] }] }),
    );
    assert.equal(byFilter.ports[0]!.networkID, w.network.id);
    assert.deepEqual(byFilter.ports[0]!.fixedIPs, [{ subnet: w.subnet.id }]);
    const byId = await resolveServerSpec(
      w.os,
      spec({ ports: [{ fixedIPs: [{ subnet: { id: w.trunkSubnet.id }, ipAddress: '10.7.0.50' }] }] }),
    );
    assert.equal(byId.ports[0]!.networkID, w.trunkNetwork.id);
    assert.deepEqual(byId.ports[0]!.fixedIPs, [{ subnet: w.trunkSubnet.id, ipAddress: '10.7.0.50' }]);

    const split = await dependencyError(
      resolveServerSpec(
        w.os,
        spec({
          ports: [{ fixedIPs: [{ subnet: { id: w.subnet.id } }, { subnet: { id: w.trunkSubnet.id } }] }],
        }),
      ),
    );
    assert.equal(split.problem, 'Invalid');
    assert.match(split.message, /subnets of different networks/);
    const missing = await dependencyError(
      resolveServerSpec(w.os, spec({ ports: [{ fixedIPs: [{ subnet: { filter: { name: 'nope' } } }] }] })),
    );
    assert.equal(missing.resource, 'subnet');
    assert.equal(missing.problem, 'NotFound');
  });

  it('refuses specs that cannot work, before any call', async () => {
    const cases: [Partial<ServerSpec>, RegExp][] = [
      [{ ports: [] }, /no ports/],
      [{ ports: [{ nameSuffix: 'x' }] }, /port rs-x has no network/],
      [{ ports: [{ nameSuffix: 'y', fixedIPs: [{ ipAddress: '10.0.0.9' }] }] }, /port rs-y has no network/],
      [
        { ports: [{ network: { id: 'a' } }, { network: { id: 'b' }, nameSuffix: '0' }] },
        /two ports are named rs-0/,
      ],
      [
        { ports: [{ network: { id: 'a' }, disablePortSecurity: true, securityGroups: [{ id: 's' }] }] },
        /disables port security but names security groups/,
      ],
      [{ additionalBlockDevices: [{ name: 'root', sizeGiB: 1, storage: { type: 'Local' } }] }, /"root"/],
      [{ image: { filter: {} } }, /image filter is empty/],
    ];
    for (const [over, message] of cases) {
      const err = await dependencyError(resolveServerSpec(w.os, spec(over)));
      assert.equal(err.problem, 'Invalid');
      assert.equal(err.terminal, true);
      assert.match(err.message, message);
    }
  });

  it('ensure turns a resolution error into Failed and creates nothing', async () => {
    const before = await census(w);
    const engine = new ServerEngine(w.os, { backoff: BACKOFF });
    const recorded: unknown[] = [];
    const r = await engine.ensure(
      { spec: spec({ image: { filter: { name: 'nope' } } }) },
      { record: (s) => Promise.resolve(void recorded.push(s)) },
    );
    assert.equal(r.phase, 'Failed');
    assert.equal(r.phase === 'Failed' && r.reason, 'DependencyError');
    assert.equal(r.phase === 'Failed' && r.terminal, false);
    assert.deepEqual(recorded, []);
    assert.deepEqual(await census(w), before);
  });
});

describe('request builders', () => {
  const port: ResolvedPortSpec = {
    name: 'm-0',
    networkID: 'net',
    tags: ['t'],
    trunk: false,
    fixedIPs: [{ subnet: 'sub' }, { ipAddress: '10.0.0.9' }],
    securityGroups: ['sg1'],
    allowedAddressPairs: [
      { ipAddress: '10.0.0.100' },
      { ipAddress: '10.0.0.101', macAddress: 'fa:16:3e:00:00:01' },
    ],
    vnicType: 'direct',
    hostID: 'compute-1',
    profile: { ovsHWOffload: true, trustedVF: true },
    propagateUplinkStatus: true,
    valueSpecs: [{ name: 'dns', key: 'dns_name', value: 'm-0' }],
  };

  it('a port body carries security groups, pairs, binding and value specs', () => {
    assert.deepEqual(portCreateBody(port), {
      network_id: 'net',
      name: 'm-0',
      'binding:host_id': 'compute-1',
      propagate_uplink_status: true,
      'binding:vnic_type': 'direct',
      'binding:profile': { capabilities: ['switchdev'], trusted: true },
      fixed_ips: [{ subnet_id: 'sub' }, { ip_address: '10.0.0.9' }],
      security_groups: ['sg1'],
      allowed_address_pairs: [
        { ip_address: '10.0.0.100' },
        { ip_address: '10.0.0.101', mac_address: 'fa:16:3e:00:00:01' },
      ],
      dns_name: 'm-0',
    });
  });

  it('without port security: no groups, no address pairs, port_security_enabled false', () => {
    const body = portCreateBody({ ...port, securityGroups: [], disablePortSecurity: true });
    assert.equal(body.port_security_enabled, false);
    assert.equal(body.security_groups, undefined);
    assert.equal(body.allowed_address_pairs, undefined);
  });

  it('Nova request: image boot with a local ephemeral disk and a data volume, tags by microversion', () => {
    const s: ServerSpec = {
      name: 'm',
      image: { id: 'img' },
      flavor: { id: 'fl' },
      ports: [{ network: { id: 'net' } }],
      additionalBlockDevices: [
        { name: 'scratch', sizeGiB: 3, storage: { type: 'Local' } },
        { name: 'data', sizeGiB: 5, storage: { type: 'Volume' } },
      ],
    };
    const resolved = { imageID: 'img', flavorID: 'fl', ports: [] };
    const volumes = [{ name: 'm-data', root: false, sizeGiB: 5, tag: 'data' }];
    const req = serverCreateRequest(s, resolved, ['p1'], volumes, new Map([['m-data', 'vol-1']]), {
      deviceTags: true,
    });
    assert.deepEqual(req, {
      server: {
        name: 'm',
        flavorRef: 'fl',
        networks: [{ port: 'p1' }],
        imageRef: 'img',
        block_device_mapping_v2: [
          {
            source_type: 'image',
            destination_type: 'local',
            uuid: 'img',
            boot_index: 0,
            delete_on_termination: true,
          },
          {
            source_type: 'blank',
            destination_type: 'local',
            volume_size: 3,
            boot_index: -1,
            delete_on_termination: true,
            tag: 'scratch',
          },
          {
            source_type: 'volume',
            destination_type: 'volume',
            uuid: 'vol-1',
            boot_index: -1,
            delete_on_termination: true,
            tag: 'data',
          },
        ],
      },
    });
    const old = serverCreateRequest(s, resolved, ['p1'], volumes, new Map([['m-data', 'vol-1']]), {
      deviceTags: false,
    });
    assert.ok(old.server.block_device_mapping_v2!.every((b) => b.tag === undefined));
  });
});
