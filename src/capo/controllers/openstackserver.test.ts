/**
 * The OpenStackServer controller through both emulators: a server with two ports (one a trunk), a
 * root volume and bootstrap data becomes Ready and leaves nothing when deleted; Nova's ERROR is
 * terminal and the delete still cleans up; Nova refusing the create again and again (NoValidHost)
 * never makes a port more than the spec's; a refused spec change; credentials that do not work.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { EventsV1Event } from '@kubernetes/client-node';
import { kinds, type Condition } from '../../kube/index.ts';
import { reconcileCount, settled } from '../../kube/testing/settle.ts';
import { addFault } from '../../openstack/core/testing/target.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import type { Action } from '../../sim/kube/reactors.ts';
import { capoKinds, SERVER_FINALIZER, type OpenStackServer, type OpenStackServerSpec } from '../api/index.ts';
import { IDENTITY_SECRET, startCapoEnv, type CapoEnv, type RunningCapo } from '../testing/env.ts';
import { openServerFixtures, type ServerFixtures } from '../testing/server-fixtures.ts';
import { OPENSTACK_SERVER_CONTROLLER } from './openstackserver.ts';

const WAIT = { timeoutMs: 60_000, intervalMs: 25 };

/** Keys the OpenStackServer controller's queue took back rate-limited (client-go's workqueue_retries_total). */
async function queueRetries(capo: RunningCapo): Promise<number> {
  const metric = (await capo.registry.getMetricsAsJSON()).find((m) => m.name === 'workqueue_retries_total');
  return (metric?.values ?? [])
    .filter((v) => v.labels.name === 'openstackserver')
    .reduce((sum, v) => sum + v.value, 0);
}

/** Polls until `fn` gives a value. */
async function until<T>(fn: () => Promise<T | undefined>, what: string): Promise<T> {
  return (await eventually(fn, { ...WAIT, what }))!;
}

describe('OpenStackServer controller', () => {
  let env: CapoEnv;
  let capo: RunningCapo;
  let fx: ServerFixtures;

  /** Every read of a Secret the controllers made, with the form they asked for. */
  const secretReads: Action[] = [];

  before(async () => {
    env = await startCapoEnv();
    fx = await openServerFixtures(env);
    env.kube.emulator.reactors.prepend('*', 'secrets', (action) => {
      if (['get', 'list', 'watch'].includes(action.verb)) secretReads.push(action);
      return { handled: false };
    });
    capo = await env.startCapo({ controllers: ['openstackserver'] });
  });
  after(async () => {
    await capo?.stop();
    await env?.close();
  });

  const condition = (s: OpenStackServer | undefined, type: string): Condition | undefined =>
    (s?.status?.conditions as Condition[] | undefined)?.find((c) => c.type === type);

  async function events(name: string): Promise<EventsV1Event[]> {
    const all = (await env.api.listAll(kinds.EventsV1Event, { namespace: env.namespace })).items;
    return all.filter((e) => e.regarding?.name === name);
  }

  async function eventWith(name: string, reason: string, type: 'Normal' | 'Warning'): Promise<EventsV1Event> {
    return until(
      async () => (await events(name)).find((e) => e.reason === reason && e.type === type),
      `${type} Event ${reason} on ${name}`,
    );
  }

  async function readyServer(name: string): Promise<OpenStackServer> {
    return until(async () => {
      const s = await fx.get(name);
      return s?.status?.ready === true ? s : undefined;
    }, `${name} Ready`);
  }

  it('creates the server, its ports, trunk and root volume with the bootstrap data; delete leaves nothing', async () => {
    const baseline = await fx.census();
    const name = 'worker-0';
    await fx.create(name, { userDataRef: { name: `${name}-bootstrap` } });

    // No bootstrap data yet: a waiting condition, and nothing made in OpenStack.
    const waiting = await until(async () => {
      const s = await fx.get(name);
      return condition(s, 'InstanceReady')?.reason === 'WaitingForBootstrapData' ? s : undefined;
    }, 'WaitingForBootstrapData');
    assert.equal(waiting.status?.ready, false);
    assert.ok(waiting.metadata?.finalizers?.includes(SERVER_FINALIZER));
    assert.deepEqual(await fx.census(), baseline);

    const userData = `#cloud-config\nhostname: ${name}\n`;
    await fx.bootstrapSecret(`${name}-bootstrap`, userData);
    const s = await readyServer(name);
    const st = s.status!;
    assert.equal(st.instanceState, 'ACTIVE');
    // capo caches its objects without managedFields (CAPO_INFORMERS); the API server keeps them.
    const cached = capo.manager.informers
      .informerFor(capoKinds.OpenStackServer)
      .get(`${s.metadata!.namespace!}/${name}`);
    assert.equal(cached?.metadata?.uid, s.metadata?.uid);
    assert.equal(cached?.metadata?.managedFields, undefined);
    assert.ok(s.metadata?.managedFields?.length);
    assert.match(st.instanceID ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(st.resources?.ports?.length, 2);
    assert.deepEqual(
      st.resolved?.ports?.map((p) => [p.name, p.trunk]),
      [
        [`${name}-0`, false],
        [`${name}-pods`, true],
      ],
    );
    assert.equal(st.addresses?.length, 2);
    assert.ok(st.addresses.every((a) => a.type === 'InternalIP'));
    for (const type of ['Ready', 'InstanceReady', 'SpecAccepted', 'OpenStackAuthenticationSucceeded']) {
      assert.equal(condition(s, type)?.status, 'True', type);
    }

    const server = await env.admin.compute.servers.get(st.instanceID!);
    const ports = await env.admin.network.ports.list({ device_id: st.instanceID! }).all();
    assert.deepEqual(ports.map((p) => p.id).sort(), st.resources.ports.map((p) => p.id).sort());
    assert.deepEqual(
      st.addresses.map((a) => a.address).sort(),
      ports.flatMap((p) => p.fixed_ips.map((ip) => ip.ip_address)).sort(),
    );
    const [trunk] = await env.admin.network.trunks.list({ name: `${name}-pods` }).all();
    assert.equal(trunk?.port_id, st.resources.ports[1]!.id);
    assert.deepEqual(trunk?.tags, ['cluster-test']);
    const [root] = await env.admin.blockStorage.volumes
      .list({ all_tenants: true, name: `${name}-root` })
      .all();
    assert.equal(root?.size, 2);
    assert.equal(
      (server as unknown as Record<string, unknown>)['OS-EXT-SRV-ATTR:user_data'],
      Buffer.from(userData).toString('base64'),
    );
    assert.deepEqual(server.metadata, { role: 'worker' });
    await eventWith(name, 'SuccessfulCreateServer', 'Normal');

    await fx.remove(name);
    assert.deepEqual(await fx.census(), baseline);
  });

  it('Nova ERROR on create: terminal condition; the delete still removes the ports', async () => {
    const baseline = await fx.census();
    const name = 'worker-error';
    await addFault(env.sim, { kind: 'error-on-create', service: 'nova', resource: 'server', times: 1 });
    await fx.create(name);
    const s = await until(async () => {
      const o = await fx.get(name);
      return o?.status?.instanceState === 'ERROR' ? o : undefined;
    }, 'instanceState ERROR');
    assert.equal(condition(s, 'InstanceReady')?.status, 'False');
    assert.equal(condition(s, 'InstanceReady')?.reason, 'InstanceStateError');
    assert.equal(condition(s, 'Ready')?.status, 'False');
    assert.equal(s.status?.ready, false);
    await eventWith(name, 'InstanceStateError', 'Warning');
    assert.equal((await fx.census()).ports, baseline.ports + 2);

    // Terminal: nothing is retried (no second server, no more ports).
    await sleep(300);
    const later = await fx.census();
    assert.equal(later.servers, baseline.servers + 1);
    assert.equal(later.ports, baseline.ports + 2);

    await fx.remove(name);
    assert.deepEqual(await fx.census(), baseline);
  });

  it('Nova refusing the create 5 times (500 NoValidHost): never more ports than the spec, then Ready', async () => {
    const baseline = await fx.census();
    const name = 'worker-novalid';
    await addFault(env.sim, {
      kind: 'request',
      service: 'nova',
      operation: 'POST /v2.1/servers',
      status: 500,
      message: 'No valid host was found. There are not enough hosts available.',
      times: 5,
    });
    const retriesBefore = await queueRetries(capo);
    const counts = new Set<number>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        counts.add((await fx.census()).ports - baseline.ports);
        await sleep(10);
      }
    })();
    try {
      await fx.create(name, { rootVolume: undefined });
      const failed = await until(async () => {
        const o = await fx.get(name);
        return condition(o, 'InstanceReady')?.reason === 'InstanceCreateFailed' ? o : undefined;
      }, 'InstanceCreateFailed');
      assert.match(condition(failed, 'InstanceReady')!.message, /No valid host/);
      assert.notEqual(failed.status?.instanceState, 'ERROR', 'a NoValidHost is not terminal');
      await eventWith(name, 'FailedCreateServer', 'Warning');
      const s = await readyServer(name);
      assert.equal(s.status?.resources?.ports?.length, 2);
    } finally {
      watching = false;
      await watcher;
    }
    assert.ok(Math.max(...counts) <= 2, `ports seen: ${[...counts].sort().join(', ')}`);
    // The back-off is the work queue's (per key, reset by a success), not one kept beside it.
    assert.ok(
      (await queueRetries(capo)) - retriesBefore >= 5,
      'each refusal went back to the queue rate-limited',
    );
    const faults = (await (await fetch(`${env.sim.url}/_sim/faults`)).json()) as { faults: unknown[] };
    assert.deepEqual(faults.faults, [], 'all 5 refusals were used');
    const servers = await env.admin.compute.servers.list({ all_tenants: true, name: `^${name}$` }).all();
    assert.equal(servers.length, 1);

    await fx.remove(name);
    assert.deepEqual(await fx.census(), baseline);
  });

  it('a create Nova keeps refusing: deleting the object removes the ports and the root volume made for it', async () => {
    const baseline = await fx.census();
    const name = 'worker-refused';
    const fault = await addFault(env.sim, {
      kind: 'request',
      service: 'nova',
      operation: 'POST /v2.1/servers',
      status: 500,
      message: 'No valid host was found.',
    });
    try {
      await fx.create(name);
      const failed = await until(async () => {
        const o = await fx.get(name);
        return condition(o, 'InstanceReady')?.reason === 'InstanceCreateFailed' ? o : undefined;
      }, 'InstanceCreateFailed');
      assert.deepEqual(await fx.census(), {
        ...baseline,
        ports: baseline.ports + 2,
        trunks: baseline.trunks + 1,
        volumes: baseline.volumes + 1,
      });
      // Recorded before its create (ours, not CAPO's): what the delete removes.
      assert.deepEqual(failed.status?.resources?.volumes, [{ name: `${name}-root` }]);
      await fx.remove(name);
      assert.deepEqual(await fx.census(), baseline);
    } finally {
      await fetch(`${env.sim.url}/_sim/faults/${fault}`, { method: 'DELETE' });
    }
  });

  it('keeps no Secret in memory: bootstrap and identity Secrets are read directly, bootstrap Secrets watched as metadata', async () => {
    const name = 'worker-late-data';
    await fx.create(name, { rootVolume: undefined, userDataRef: { name: `${name}-bootstrap` } });
    await until(async () => {
      const s = await fx.get(name);
      return condition(s, 'InstanceReady')?.reason === 'WaitingForBootstrapData' ? s : undefined;
    }, 'WaitingForBootstrapData');
    // As `kubectl apply` writes it: the last-applied annotation is a second copy of the data.
    const value = '#cloud-config\nhostname: late\n';
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${name}-bootstrap`, namespace: env.namespace },
      type: 'cluster.x-k8s.io/secret',
      stringData: { format: 'cloud-config', value },
    };
    await env.api.create(kinds.Secret, {
      ...secret,
      metadata: {
        ...secret.metadata,
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(secret) },
      },
    });
    const ready = await readyServer(name);
    const server = await env.admin.compute.servers.get(ready.status!.instanceID!);
    assert.equal(
      (server as unknown as Record<string, unknown>)['OS-EXT-SRV-ATTR:user_data'],
      Buffer.from(value).toString('base64'),
    );

    const whole = secretReads.filter((a) => a.verb !== 'get' && a.output !== 'partial');
    assert.deepEqual(
      whole.map((a) => `${a.verb} ${a.namespace}/${a.name} as ${a.output}`),
      [],
      'no list or watch of whole Secrets',
    );
    assert.ok(
      secretReads.some((a) => a.verb === 'watch' && a.output === 'partial'),
      'bootstrap Secrets are watched, as metadata only',
    );
    assert.ok(
      secretReads.some((a) => a.verb === 'get' && a.name === IDENTITY_SECRET),
      'the identity Secret is read directly',
    );
    assert.ok(
      secretReads.some((a) => a.verb === 'get' && a.name === `${name}-bootstrap`),
      'the bootstrap Secret is read directly',
    );
    const cached = capo.manager.informers.all().flatMap((i) => i.list());
    const held = cached.filter((o) => 'data' in o || 'stringData' in o);
    assert.deepEqual(
      held.map((o) => `${o.kind} ${o.metadata?.name}`),
      [],
      'no cached object carries data',
    );
    const bootstrap = cached.find((o) => o.metadata?.name === `${name}-bootstrap`);
    assert.ok(bootstrap, 'the watch saw the bootstrap Secret');
    assert.equal(bootstrap.kind, 'PartialObjectMetadata');
    assert.doesNotMatch(JSON.stringify(bootstrap), /hostname|cloud-config/);

    await fx.remove(name);
  });

  it('refuses a spec change (condition + Warning Event) and keeps the server; floatingIPPoolRef is reported', async () => {
    const name = 'worker-immutable';
    await fx.create(name, {
      rootVolume: undefined,
      floatingIPPoolRef: {
        apiGroup: 'infrastructure.cluster.x-k8s.io',
        kind: 'OpenStackFloatingIPPool',
        name: 'pool',
      },
    });
    const s = await readyServer(name);
    const pool = condition(s, 'FloatingAddressFromPoolReady');
    assert.equal(pool?.status, 'False');
    assert.equal(pool?.reason, 'NotSupported');
    await eventWith(name, 'NotSupported', 'Warning');

    const other = (await env.os.compute.flavors.list().all()).find((f) => f.id !== fx.flavor.id)!;
    await env.api.patch(capoKinds.OpenStackServer, { namespace: env.namespace, name }, 'merge', {
      spec: { flavor: other.name },
    });
    const refused = await until(async () => {
      const o = await fx.get(name);
      return condition(o, 'SpecAccepted')?.status === 'False' ? o : undefined;
    }, 'SpecAccepted False');
    assert.equal(condition(refused, 'SpecAccepted')?.reason, 'ImmutableFieldChanged');
    assert.match(condition(refused, 'SpecAccepted')!.message, /spec\.flavor/);
    await eventWith(name, 'SpecChangeRefused', 'Warning');
    assert.equal(refused.status?.ready, true);
    assert.equal(refused.status?.instanceID, s.status?.instanceID);
    const server = await env.admin.compute.servers.get(s.status!.instanceID!);
    assert.equal(
      'original_name' in server.flavor && server.flavor.original_name,
      fx.flavor.name,
      'the server keeps the accepted flavor',
    );
    assert.equal((refused.status?.acceptedSpec as OpenStackServerSpec).flavor, fx.flavor.name);

    await fx.remove(name);
  });

  it('credentials that cannot be used: condition and Event; a delete needs no credentials when nothing was made', async () => {
    const name = 'worker-nocreds';
    await fx.create(name, {
      identityRef: { type: 'Secret', name: 'no-such-secret', cloudName: 'openstack' },
    });
    const s = await until(async () => {
      const o = await fx.get(name);
      return condition(o, 'OpenStackAuthenticationSucceeded')?.status === 'False' ? o : undefined;
    }, 'OpenStackAuthenticationSucceeded False');
    assert.equal(condition(s, 'OpenStackAuthenticationSucceeded')?.reason, 'OpenStackAuthenticationFailed');
    assert.match(
      condition(s, 'OpenStackAuthenticationSucceeded')!.message,
      /Secret capo-demo\/no-such-secret not found/,
    );
    assert.equal(condition(s, 'Ready')?.status, 'False');
    await eventWith(name, 'IdentityNotFound', 'Warning');
    await fx.remove(name);

    // The password is wrong: Keystone refuses it, which only the first OpenStack call shows.
    const bad = await env.identitySecret('wrong-password');
    await env.api.patch(kinds.Secret, { namespace: env.namespace, name: 'wrong-password' }, 'merge', {
      stringData: { 'clouds.yaml': env.cloudsYaml().replace(/password: .*/, 'password: nope') },
    });
    const name2 = 'worker-badpassword';
    await fx.create(name2, { identityRef: bad });
    const s2 = await until(async () => {
      const o = await fx.get(name2);
      return condition(o, 'OpenStackAuthenticationSucceeded')?.status === 'False' ? o : undefined;
    }, 'Keystone refusal');
    assert.match(condition(s2, 'OpenStackAuthenticationSucceeded')!.message, /authentication at .* failed/);
    assert.doesNotMatch(condition(s2, 'OpenStackAuthenticationSucceeded')!.message, /nope/);
    await eventWith(name2, 'OpenStackAuthenticationFailed', 'Warning');
    await fx.remove(name2);
  });
});

describe('OpenStackServer controller on a cloud without block storage', () => {
  let env: CapoEnv;
  let capo: RunningCapo | undefined;
  let fx: ServerFixtures;

  before(async () => {
    env = await startCapoEnv({ notInCatalog: ['cinder'] });
    fx = await openServerFixtures(env);
  });
  after(async () => {
    await capo?.stop();
    await env?.close();
  });

  const condition = (s: OpenStackServer | undefined, type: string): Condition | undefined =>
    (s?.status?.conditions as Condition[] | undefined)?.find((c) => c.type === type);

  it('a status CAPO wrote (no volumes recorded): the delete derives no volume name and needs no Cinder', async () => {
    // Restored from CAPO (clusterctl move): CAPO made the port, recorded it, and the object is
    // being deleted when this controller first sees it.
    const baseline = await fx.census();
    const name = 'from-capo';
    const port = await env.os.network.ports.create({ network_id: fx.network.id, name: `${name}-0` });
    await env.api.create(capoKinds.OpenStackServer, {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
      kind: 'OpenStackServer',
      metadata: { name, namespace: env.namespace, finalizers: [SERVER_FINALIZER] },
      spec: JSON.parse(JSON.stringify(fx.spec({ ports: [{ network: { id: fx.network.id } }] }))),
    });
    await env.api.patch(
      capoKinds.OpenStackServer,
      { namespace: env.namespace, name },
      'merge',
      {
        status: {
          ready: false,
          resolved: {
            imageID: env.boot.imageId,
            flavorID: fx.flavor.id,
            ports: [
              {
                name: `${name}-0`,
                description: '',
                networkID: fx.network.id,
                tags: [],
                trunk: false,
                fixedIPs: [],
                securityGroups: [],
              },
            ],
          },
          resources: { ports: [{ id: port.id }] },
        },
      },
      { subresource: 'status' },
    );
    await env.api.delete(capoKinds.OpenStackServer, { namespace: env.namespace, name });
    capo = await env.startCapo({ controllers: ['openstackserver'] });
    await eventually(async () => (await fx.get(name)) === undefined, {
      ...WAIT,
      what: `${name} deleted (the port, and no volume lookup)`,
    });
    assert.deepEqual(await fx.census(), baseline);
  });

  it('rootVolume: the missing service is said (not an auth failure); the delete removes the ports and the finalizer', async () => {
    capo ??= await env.startCapo({ controllers: ['openstackserver'] });
    const baseline = await fx.census();
    const name = 'worker-nocinder';
    await fx.create(name);
    const s = await until(async () => {
      const o = await fx.get(name);
      return condition(o, 'InstanceReady')?.reason === 'EndpointNotFound' ? o : undefined;
    }, 'InstanceReady EndpointNotFound');
    const message = condition(s, 'InstanceReady')!.message;
    assert.match(message, /rootVolume needs block storage/);
    assert.match(message, /no block-storage \(volumev3\) endpoint \(interface public, region RegionOne/);
    assert.equal(condition(s, 'Ready')?.reason, 'EndpointNotFound');
    assert.equal(condition(s, 'OpenStackAuthenticationSucceeded')?.status, 'True', 'the credentials worked');
    assert.equal(s.status?.resources?.volumes, undefined, 'no volume was ever asked for');
    const events = (await env.api.listAll(kinds.EventsV1Event, { namespace: env.namespace })).items;
    assert.ok(
      events.some(
        (e) => e.regarding?.name === name && e.type === 'Warning' && e.reason === 'EndpointNotFound',
      ),
      'a Warning Event says it',
    );
    // The volumes are looked for first (they take longest): without Cinder nothing is made at all.
    assert.equal((await fx.census()).ports, baseline.ports, 'no port was made for a server that cannot boot');

    await fx.remove(name);
    assert.deepEqual(await fx.census(), baseline);
  });
});

describe('OpenStackServer controller: its own finalizer', () => {
  let env: CapoEnv;
  let capo: RunningCapo;
  let fx: ServerFixtures;

  before(async () => {
    env = await startCapoEnv();
    fx = await openServerFixtures(env);
    // A minute before any look again: every reconcile counted below comes from an event.
    capo = await env.startCapo({ controllers: ['openstackserver'], server: { waitMs: 60_000 } });
  });
  after(async () => {
    await capo?.stop();
    await env?.close();
  });

  it('adding its finalizer does not wake it again (one reconcile for a server waiting for bootstrap data)', async () => {
    const before = await reconcileCount(capo.manager, OPENSTACK_SERVER_CONTROLLER);
    const name = 'worker-waits';
    await fx.create(name, { userDataRef: { name: `${name}-bootstrap` } });
    await until(async () => {
      const s = await fx.get(name);
      const waiting = (s?.status?.conditions as Condition[] | undefined)?.find(
        (c) => c.type === 'InstanceReady' && c.reason === 'WaitingForBootstrapData',
      );
      return waiting && s?.metadata?.finalizers?.includes(SERVER_FINALIZER) ? s : undefined;
    }, 'the finalizer and WaitingForBootstrapData');
    await settled(capo.manager, OPENSTACK_SERVER_CONTROLLER, [
      [capoKinds.OpenStackServer, { namespace: env.namespace, name }],
    ]);
    // The create event's reconcile wrote the finalizer and the status; neither wakes it.
    assert.equal((await reconcileCount(capo.manager, OPENSTACK_SERVER_CONTROLLER)) - before, 1);
    await fx.remove(name);
  });
});
