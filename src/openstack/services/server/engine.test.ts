/**
 * The server engine against the emulator: a machine with two ports (one a trunk), a root and a data
 * volume, tags, metadata, user data and scheduler hints goes ACTIVE and is checked in Nova, Neutron
 * and Cinder; removal leaves nothing; a server that ends in ERROR fails terminally and its ports
 * are still cleaned; Nova refusing the create five times never makes a port more.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { addFault, clearFaults } from '../../core/testing/target.ts';
import { ServerEngine } from './engine.ts';
import type { ServerApi } from './api.ts';
import {
  BACKOFF,
  census,
  converge,
  machineSpec,
  openServerWorld,
  Recorder,
  teardown,
  type ServerWorld,
} from './testing/fixtures.ts';
import type { EnsureResult, ServerState } from './types.ts';

describe('server engine', () => {
  let w: ServerWorld;
  let baseline: Awaited<ReturnType<typeof census>>;

  before(async () => {
    w = await openServerWorld();
    baseline = await census(w);
  });
  after(async () => {
    await w?.close();
  });

  it('creates a machine with two ports, a trunk, volumes, tags, user data and hints; removes it all', async () => {
    const hints: unknown[] = [];
    // Scheduler hints are not readable back from Nova: look at what the engine asks for.
    const api: ServerApi = {
      network: w.os.network,
      blockStorage: w.os.blockStorage,
      image: w.os.image,
      compute: {
        ...w.os.compute,
        servers: {
          ...w.os.compute.servers,
          create: (server, o) => {
            hints.push(o?.schedulerHints);
            return w.os.compute.servers.create(server, o);
          },
        },
      },
    };
    const engine = new ServerEngine(api, { backoff: BACKOFF });
    const spec = machineSpec('worker-a');
    const rec = new Recorder();
    // What exists of the machine when each state is recorded: nothing yet when the resolved spec is.
    const existing: number[] = [];
    const record = async (state: ServerState) => {
      const ports = await w.os.network.ports.list({ name: 'worker-a-0' }).all();
      const volumes = await w.os.blockStorage.volumes.list({ name: 'worker-a-root' }).all();
      existing.push(ports.length + volumes.length);
      await rec.record(state);
    };

    const first = await engine.ensure({ spec }, { record });
    assert.equal(first.phase, 'Pending');
    assert.equal(first.phase === 'Pending' && first.reason, 'VolumeCreating');
    assert.ok(rec.calls[0]!.resolved && rec.calls[0]!.resources?.ports.length === 0);
    assert.equal(existing[0], 0, 'nothing is created before the resolved spec is recorded');
    // The same call goes on: both ports, the trunk and both volumes asked for.
    assert.deepEqual(
      first.actions
        .filter((a) => a.verb === 'create')
        .map((a) => `${a.resource} ${a.name}`)
        .sort(),
      [
        'port worker-a-0',
        'port worker-a-pods',
        'trunk worker-a-pods',
        'volume worker-a-etcd',
        'volume worker-a-root',
      ],
    );
    const resolved = rec.calls[0]!.resolved;
    assert.deepEqual(
      resolved.ports.map((p) => [p.name, p.networkID, p.trunk]),
      [
        ['worker-a-0', w.network.id, false],
        ['worker-a-pods', w.trunkNetwork.id, true],
      ],
    );
    assert.deepEqual(resolved.ports[0]!.fixedIPs, [{ subnet: w.subnet.id }]);
    assert.deepEqual(resolved.ports[0]!.securityGroups, [w.securityGroup.id]);
    assert.deepEqual(resolved.ports[0]!.tags, ['cluster-test', 'primary']);
    assert.equal(resolved.serverGroupID, w.serverGroupId);
    assert.deepEqual(
      resolved.volumes!.map((v) => v.name),
      ['worker-a-root', 'worker-a-etcd'],
    );

    const run = await converge(engine, spec, rec);
    const ready = run.result;
    assert.equal(ready.phase, 'Ready', JSON.stringify(ready));
    if (ready.phase !== 'Ready') return;

    // What was recorded, and in which order: each port before the next write, the server last.
    const portIds = rec.state.resources!.ports.map((p) => p.id);
    assert.equal(portIds.length, 2);
    const firstWithPort = rec.calls.findIndex((c) => c.resources?.ports.length === 1);
    const firstWithBoth = rec.calls.findIndex((c) => c.resources?.ports.length === 2);
    const firstWithServer = rec.calls.findIndex((c) => c.instanceID !== undefined);
    assert.ok(0 < firstWithPort && firstWithPort < firstWithBoth && firstWithBoth < firstWithServer);
    assert.equal(rec.state.instanceID, ready.instanceID);

    // Nova.
    const server = await w.admin.compute.servers.get(ready.instanceID);
    assert.equal(server.status, 'ACTIVE');
    assert.equal(server.name, 'worker-a');
    assert.deepEqual(server.tags, ['cluster-test']);
    assert.deepEqual(server.metadata, { role: 'worker', cluster: 'test' });
    assert.equal(server.key_name, 'capo');
    assert.equal(server.config_drive, 'True');
    assert.equal(server['OS-EXT-AZ:availability_zone'], 'nova');
    assert.deepEqual(server.server_groups, [w.serverGroupId]);
    assert.equal(server.image, '', 'booted from its root volume');
    const userData = (server as unknown as Record<string, string>)['OS-EXT-SRV-ATTR:user_data']!;
    assert.equal(Buffer.from(userData, 'base64').toString(), '#cloud-config\nhostname: worker-a\n');
    assert.deepEqual(hints, [{ group: w.serverGroupId, 'capo-hint': 'a', spread: true, weight: 2 }]);

    // Neutron.
    const [p0, p1] = await Promise.all(portIds.map((id) => w.os.network.ports.get(id)));
    assert.equal(p0!.name, 'worker-a-0');
    assert.equal(p0!.description, 'machine port');
    assert.equal(p0!.device_id, server.id);
    assert.equal(p0!.fixed_ips[0]!.subnet_id, w.subnet.id);
    assert.deepEqual(p0!.security_groups, [w.securityGroup.id]);
    assert.deepEqual([...p0!.tags].sort(), ['cluster-test', 'primary']);
    assert.equal(p1!.name, 'worker-a-pods');
    assert.equal(p1!.network_id, w.trunkNetwork.id);
    assert.equal(p1!.device_id, server.id);
    assert.deepEqual(
      p1!.allowed_address_pairs.map((p) => p.ip_address),
      ['10.7.0.250'],
    );
    const trunks = await w.os.network.trunks.list({ port_id: p1!.id }).all();
    assert.equal(trunks.length, 1);
    assert.equal(trunks[0]!.name, 'worker-a-pods');
    assert.deepEqual(trunks[0]!.tags, ['cluster-test']);
    assert.equal((await w.os.network.trunks.list({ port_id: p0!.id }).all()).length, 0);

    // Cinder.
    const [root] = await w.os.blockStorage.volumes.list({ name: 'worker-a-root' }).all();
    const [etcd] = await w.os.blockStorage.volumes.list({ name: 'worker-a-etcd' }).all();
    assert.equal(root?.status, 'in-use');
    assert.equal(root.bootable, 'true');
    assert.equal(root.size, 2);
    assert.equal(etcd?.status, 'in-use');
    assert.equal(etcd.size, 1);
    assert.deepEqual(
      [...(server['os-extended-volumes:volumes_attached'] ?? [])].map((v) => v.id).sort(),
      [root.id, etcd.id].sort(),
    );

    // Addresses as a Node shows them.
    assert.deepEqual(
      ready.addresses.map((a) => [a.type, a.network, a.address]).sort(),
      [
        ['InternalIP', 'machines', p0!.fixed_ips[0]!.ip_address],
        ['InternalIP', 'pods', p1!.fixed_ips[0]!.ip_address],
      ].sort(),
    );

    // Steady state: nothing written, one read of the server.
    const again = await engine.ensure({ spec, ...rec.state }, { record: rec.record });
    assert.equal(again.phase, 'Ready');
    assert.deepEqual(again.actions, []);

    const removal = await teardown(engine, 'worker-a', rec);
    assert.equal(removal.result.phase, 'Ready', JSON.stringify(removal.result));
    assert.deepEqual(await census(w), baseline, 'no server, port, trunk or volume left');
  });

  it('a server Nova puts in ERROR fails terminally with the fault; remove still cleans its ports', async () => {
    const engine = new ServerEngine(w.os, { backoff: BACKOFF });
    const spec = machineSpec('worker-err');
    const rec = new Recorder();
    await addFault(w.sim, { kind: 'error-on-create', service: 'nova', resource: 'server', times: 1 });
    const r = (await converge(engine, spec, rec)).result;
    assert.equal(r.phase, 'Failed', JSON.stringify(r));
    if (r.phase !== 'Failed') return;
    assert.equal(r.reason, 'InstanceError');
    assert.equal(r.terminal, true);
    assert.equal(r.instanceState, 'ERROR');
    assert.match(r.message, /Exceeded maximum number of retries/);
    assert.equal(rec.state.resources!.ports.length, 2, 'the ports stay recorded');

    assert.equal((await teardown(engine, 'worker-err', rec)).result.phase, 'Ready');
    assert.deepEqual(await census(w), baseline);
  });

  it('Nova refusing the create 5 times (500 NoValidHost) never makes a port more', async () => {
    const engine = new ServerEngine(w.os, { backoff: BACKOFF });
    const spec = machineSpec('worker-novalid', { volumes: false });
    const rec = new Recorder();
    await addFault(w.sim, {
      kind: 'request',
      service: 'nova',
      operation: 'POST /v2.1/servers',
      status: 500,
      message: 'No valid host was found. There are not enough hosts available.',
      times: 5,
    });
    try {
      const failures: EnsureResult[] = [];
      const ports: number[] = [];
      for (let i = 0; i < 50 && failures.length < 5; i++) {
        const r = await engine.ensure({ spec, ...rec.state }, { record: rec.record });
        if (r.phase === 'Failed') {
          failures.push(r);
          ports.push((await census(w)).ports);
        } else assert.equal(r.phase, 'Pending', JSON.stringify(r));
      }
      assert.equal(failures.length, 5);
      for (const f of failures) {
        assert.equal(f.phase === 'Failed' && f.reason, 'InstanceCreateFailed');
        assert.equal(f.phase === 'Failed' && f.terminal, false);
        assert.match(f.phase === 'Failed' ? f.message : '', /No valid host/);
      }
      assert.deepEqual(ports, Array(5).fill(baseline.ports + 2), 'exactly the spec’s two ports, every time');
      assert.deepEqual(
        failures.slice(1).map((f) => f.actions),
        [[], [], [], []],
        'a retry after a failed create writes nothing but the create',
      );

      const r = (await converge(engine, spec, rec)).result;
      assert.equal(r.phase, 'Ready', JSON.stringify(r));
      assert.equal((await census(w)).ports, baseline.ports + 2);
      assert.equal((await census(w)).servers, baseline.servers + 1);
    } finally {
      await clearFaults(w.sim);
    }
    assert.equal((await teardown(engine, 'worker-novalid', rec)).result.phase, 'Ready');
    assert.deepEqual(await census(w), baseline);
  });

  it('a SHUTOFF server is reported, not Ready, and not failed', async () => {
    const engine = new ServerEngine(w.os, { backoff: BACKOFF });
    const spec = machineSpec('worker-off', { volumes: false, trunkPort: false });
    const rec = new Recorder();
    const ready = (await converge(engine, spec, rec)).result;
    assert.equal(ready.phase, 'Ready');
    await w.os.compute.servers.stop(rec.state.instanceID!);
    await w.os.compute.servers.waitForStatus(rec.state.instanceID!, 'SHUTOFF', {
      intervalMs: 5,
      timeoutMs: 10_000,
    });
    const r = await engine.ensure({ spec, ...rec.state }, { record: rec.record });
    assert.equal(r.phase, 'Pending');
    assert.equal(r.phase === 'Pending' && r.reason, 'InstanceNotReady');
    assert.equal(r.phase === 'Pending' && r.instanceState, 'SHUTOFF');
    assert.equal(r.phase === 'Pending' && r.retryAfterMs, engine.policy.idleMs);
    assert.equal((await teardown(engine, 'worker-off', rec)).result.phase, 'Ready');
    assert.deepEqual(await census(w), baseline);
  });

  it('remove deletes a trunk’s subports and their ports too', async () => {
    const engine = new ServerEngine(w.os, { backoff: BACKOFF });
    const spec = machineSpec('worker-sub', { volumes: false });
    const rec = new Recorder();
    assert.equal((await converge(engine, spec, rec)).result.phase, 'Ready');
    const parent = rec.state.resources!.ports[1]!.id;
    const [trunk] = await w.os.network.trunks.list({ port_id: parent }).all();
    // What Kuryr does on a trunk: a pod port as a VLAN subport.
    const pod = await w.os.network.ports.create({ network_id: w.trunkNetwork.id, name: 'pod-port' });
    await w.os.network.trunks.addSubports(trunk!.id, [
      { port_id: pod.id, segmentation_type: 'vlan', segmentation_id: 101 },
    ]);
    const removal = await teardown(engine, 'worker-sub', rec);
    assert.equal(removal.result.phase, 'Ready', JSON.stringify(removal.result));
    const actions = removal.results.flatMap((r) => r.actions);
    assert.ok(actions.some((a) => a.resource === 'subports' && a.id === trunk!.id));
    assert.ok(actions.some((a) => a.resource === 'port' && a.verb === 'delete' && a.id === pod.id));
    assert.deepEqual(await census(w), baseline);
  });

  it('asks for the volumes beside the ports: the root volume before the first port is answered', async () => {
    const order: string[] = [];
    let volumeAsked!: () => void;
    const asked = new Promise<void>((resolve) => (volumeAsked = resolve));
    const { ports } = w.os.network;
    const { volumes } = w.os.blockStorage;
    const api: ServerApi = {
      compute: w.os.compute,
      image: w.os.image,
      network: {
        ...w.os.network,
        ports: {
          ...ports,
          create: async (body, o) => {
            order.push(`port ${body.name} asked`);
            // Held until the volume is asked for; sequential code never asks (the bound ends the wait).
            await Promise.race([asked, sleep(5_000)]);
            const port = await ports.create(body, o);
            order.push(`port ${body.name} answered`);
            return port;
          },
        },
      },
      blockStorage: {
        ...w.os.blockStorage,
        volumes: {
          ...volumes,
          create: (body, o) => {
            order.push(`volume ${body.name} asked`);
            volumeAsked();
            return volumes.create(body, o);
          },
        },
      },
    };
    const spec = machineSpec('side-by-side', { trunkPort: false });
    const rec = new Recorder();
    const first = await new ServerEngine(api, { backoff: BACKOFF }).ensure({ spec }, { record: rec.record });
    assert.equal(first.phase === 'Pending' && first.reason, 'VolumeCreating', JSON.stringify(first));
    assert.ok(
      order.indexOf('volume side-by-side-root asked') < order.indexOf('port side-by-side-0 answered'),
      order.join(', '),
    );
    // Recorded one at a time, each with all that was made before it: the last has both.
    const last = rec.calls.at(-1)!;
    assert.equal(last.resources?.ports.length, 1);
    assert.deepEqual(
      last.resources?.volumes?.map((v) => v.name),
      ['side-by-side-root', 'side-by-side-etcd'],
    );
    const engine = new ServerEngine(w.os, { backoff: BACKOFF });
    assert.equal((await converge(engine, spec, rec)).result.phase, 'Ready');
    assert.equal((await teardown(engine, 'side-by-side', rec)).result.phase, 'Ready');
    assert.deepEqual(await census(w), baseline);
  });

  it('while its volumes are being made, a call reads only the volumes', async () => {
    // Both volumes stay `creating` until the faults go.
    await addFault(w.sim, { kind: 'stuck', service: 'cinder', resource: 'volume', times: 2 });
    const spec = machineSpec('waits');
    const rec = new Recorder();
    const engine = new ServerEngine(w.os, { backoff: BACKOFF });
    const first = await engine.ensure({ spec }, { record: rec.record });
    assert.equal(first.phase === 'Pending' && first.reason, 'VolumeCreating', JSON.stringify(first));
    w.sim.cloud.stats.reset();
    const again = await engine.ensure({ spec, ...rec.state }, { record: rec.record });
    assert.equal(again.phase === 'Pending' && again.reason, 'VolumeCreating');
    const calls = Object.entries(w.sim.cloud.stats.snapshot().services).flatMap(([svc, s]) =>
      Object.entries(s?.operations ?? {}).map(([op, o]) => `${o.count}× ${svc} ${op}`),
    );
    assert.deepEqual(
      calls,
      ['2× cinder GET /v3/{project_id}/volumes/detail'],
      'one list per volume, nothing else',
    );
    await clearFaults(w.sim);
    for (const name of ['waits-root', 'waits-etcd'])
      for (const v of await w.os.blockStorage.volumes.list({ name }).all())
        assert.ok(w.sim.cloud.forceState('cinder', 'volume', v.id, { status: 'available' }));
    assert.equal((await teardown(engine, 'waits', rec)).result.phase, 'Ready');
    assert.deepEqual(await census(w), baseline);
  });

  it('looks for a server to adopt only when its volumes are all made: none can hold a volume yet to be made', async () => {
    const engine = new ServerEngine(w.os, { backoff: BACKOFF });
    const serverLists = () =>
      w.sim.cloud.stats.snapshot().services['nova']?.operations['GET /v2.1/servers/detail']?.count ?? 0;
    const spec = machineSpec('no-list');
    const rec = new Recorder();
    w.sim.cloud.stats.reset();
    const first = await engine.ensure({ spec }, { record: rec.record });
    assert.equal(first.phase === 'Pending' && first.reason, 'VolumeCreating', JSON.stringify(first));
    assert.equal(serverLists(), 0, 'the volumes were just asked for: no Nova list');
    // Once they are available the call that creates the server looks first (its answer may be lost).
    assert.equal((await converge(engine, spec, rec)).result.phase, 'Ready');
    assert.equal(serverLists(), 1);
    // Without volumes there is nothing to tell: the first call looks.
    const bare = machineSpec('no-volumes', { volumes: false, trunkPort: false });
    const bareRec = new Recorder();
    w.sim.cloud.stats.reset();
    await engine.ensure({ spec: bare }, { record: bareRec.record });
    assert.equal(serverLists(), 1);
    assert.equal((await teardown(engine, 'no-list', rec)).result.phase, 'Ready');
    assert.equal((await converge(engine, bare, bareRec)).result.phase, 'Ready');
    assert.equal((await teardown(engine, 'no-volumes', bareRec)).result.phase, 'Ready');
    assert.deepEqual(await census(w), baseline);
  });

  it('records the resolved spec with every volume name in one write; with recordsResult the server id is left to the result', async () => {
    const engine = new ServerEngine(w.os, { backoff: BACKOFF });
    const spec = machineSpec('worker-w');
    const rec = new Recorder();
    const first = await engine.ensure({ spec }, { record: rec.record, recordsResult: true });
    assert.equal(first.phase, 'Pending');
    // The first write: resolved, and the names of both volumes (recorded before their creates).
    assert.deepEqual(
      rec.calls[0]!.resources?.volumes?.map((v) => v.name),
      ['worker-w-root', 'worker-w-etcd'],
    );
    assert.equal(rec.calls[0]!.resources?.ports.length, 0);
    // Then one write per port (its id before its tags and trunk): three in all, not four.
    assert.equal(rec.calls.length, 3, JSON.stringify(rec.calls.map((c) => c.resources)));
    // The caller writes each result's state, as a controller's status write does.
    let state = first.state;
    let result: EnsureResult = first;
    let serverCall = -1;
    for (let i = 0; i < 50 && result.phase === 'Pending'; i++) {
      await sleep(Math.min(result.retryAfterMs, 20));
      const writes: number = rec.calls.length;
      result = await engine.ensure({ spec, ...state }, { record: rec.record, recordsResult: true });
      if (serverCall < 0 && result.actions.some((a) => a.resource === 'server' && a.verb === 'create')) {
        serverCall = i;
        assert.equal(rec.calls.length, writes, 'the server id is not written before the call returns');
        assert.ok(result.state.instanceID, 'it is in the result');
      }
      state = result.state;
    }
    assert.equal(result.phase, 'Ready', JSON.stringify(result));
    assert.ok(serverCall >= 0);
    assert.ok(rec.calls.every((c) => c.instanceID === undefined));
    const removed = await teardown(engine, 'worker-w', Object.assign(new Recorder(), { state }));
    assert.equal(removed.result.phase, 'Ready');
  });

  it('remove with nothing recorded, or only the resolved spec, touches nothing', async () => {
    const engine = new ServerEngine(w.os, { backoff: BACKOFF });
    const r = await engine.remove({ name: 'never' });
    assert.equal(r.phase, 'Ready');
    const rec = new Recorder();
    const spec = machineSpec('only-resolved');
    // The state recorded before anything is created (a process that died right after).
    await rec.record({ resolved: await engine.resolve(spec), resources: { ports: [] } });
    const removal = await teardown(engine, 'only-resolved', rec);
    assert.equal(removal.result.phase, 'Ready');
    assert.deepEqual(
      removal.results.flatMap((x) => x.actions),
      [],
    );
    assert.deepEqual(await census(w), baseline);
  });

  it('a subnet with no free address fails the machine as OutOfCapacity, not terminally, and leaks nothing', async () => {
    const engine = new ServerEngine(w.os, { backoff: BACKOFF });
    const network = await w.os.network.networks.create({ name: 'tiny' });
    // A /30: the gateway and one address, which a port outside the engine takes.
    const subnet = await w.os.network.subnets.create({
      network_id: network.id,
      cidr: '10.9.0.0/30',
      ip_version: 4,
    });
    const squatter = await w.os.network.ports.create({ network_id: network.id, name: 'squatter' });
    const spec = { ...machineSpec('worker-full', { volumes: false, trunkPort: false }) };
    spec.ports = [{ network: { filter: { name: 'tiny' } } }];
    const rec = new Recorder();
    let r = await engine.ensure({ spec, ...rec.state }, { record: rec.record });
    for (let i = 0; i < 5 && r.phase === 'Pending' && r.reason !== 'Conflict'; i++)
      r = await engine.ensure({ spec, ...rec.state }, { record: rec.record });
    assert.equal(r.phase, 'Failed', JSON.stringify(r));
    assert.equal(r.phase === 'Failed' && r.reason, 'OutOfCapacity');
    assert.equal(r.phase === 'Failed' && r.terminal, false, 'a freed address lets the next try through');
    assert.match(r.phase === 'Failed' ? r.message : '', /No more IP addresses available on network/);
    assert.equal((await teardown(engine, 'worker-full', rec)).result.phase, 'Ready');
    await w.os.network.ports.delete(squatter.id);
    await w.os.network.subnets.delete(subnet.id);
    await w.os.network.networks.delete(network.id);
    assert.deepEqual(await census(w), baseline);
  });

  it('a recorded server that is gone fails terminally as InstanceNotFound', async () => {
    const engine = new ServerEngine(w.os, { backoff: BACKOFF });
    const spec = machineSpec('worker-gone', { volumes: false, trunkPort: false });
    const rec = new Recorder();
    assert.equal((await converge(engine, spec, rec)).result.phase, 'Ready');
    await w.os.compute.servers.delete(rec.state.instanceID!);
    await w.os.compute.servers.waitForDeleted(rec.state.instanceID!, { intervalMs: 5, timeoutMs: 10_000 });
    const r = await engine.ensure({ spec, ...rec.state }, { record: rec.record });
    assert.equal(r.phase, 'Failed');
    assert.equal(r.phase === 'Failed' && r.reason, 'InstanceNotFound');
    assert.equal(r.phase === 'Failed' && r.terminal, true);
    assert.equal((await teardown(engine, 'worker-gone', rec)).result.phase, 'Ready');
    assert.deepEqual(await census(w), baseline);
  });
});
