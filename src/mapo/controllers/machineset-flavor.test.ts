/**
 * The machineset-flavor controller on both emulators: the installer's worker MachineSet gets its
 * flavor's vCPU and memoryMb, MachineSets sharing a flavor share one Nova lookup, and a bad
 * provider spec or an unknown flavor gets a Warning Event naming the MachineSet and no annotation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAPO_UNCACHED_KINDS } from '../cmd.ts';
import { ScopeCache } from '../../capo/identity.ts';
import { createLogger } from '../../lib/log.ts';
import { createRegistry } from '../../lib/metrics.ts';
import { kinds, Manager } from '../../kube/index.ts';
import { kubeConfigFrom } from '../../kube/testing/env.ts';
import { DiscoveryCache } from '../../openstack/core/discovery.ts';
import { TokenCache } from '../../openstack/core/token-cache.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { Annotations, mapoKinds, type MachineSet } from '../api/index.ts';
import { MAPI_NAMESPACE, startMapoEnv, type MapoEnv } from '../testing/env.ts';
import { MachineSetFlavorEventReasons, registerMachineSetFlavorController } from './machineset-flavor.ts';

const WAIT = { timeoutMs: 30_000 };
const USER_AGENT = 'shiftstack-mapo-flavor-test';

describe('machineset-flavor controller (MAPO MachineSet vCPU / memoryMb)', () => {
  let env: MapoEnv;
  let stop: AbortController;
  let done: Promise<void>;
  let scopes: ScopeCache;

  before(async () => {
    env = await startMapoEnv();
    const log = createLogger({ level: 'silent' });
    const registry = createRegistry({ defaultMetrics: false });
    const manager = new Manager({
      name: 'mapo-controller-manager',
      kubeConfig: kubeConfigFrom(env.kube.kubeconfigPath),
      qps: 0,
      disableCacheFor: MAPO_UNCACHED_KINDS,
      log,
      registry,
      gracefulShutdownTimeoutMs: 5_000,
    });
    scopes = new ScopeCache({
      reader: manager.client,
      client: {
        log,
        registry,
        tokenCache: new TokenCache(),
        discoveryCache: new DiscoveryCache(),
        retry: { baseDelayMs: 10, maxDelayMs: 50 },
        userAgent: USER_AGENT,
      },
      log,
    });
    registerMachineSetFlavorController(manager, scopes, { workers: 4 });
    stop = new AbortController();
    done = manager.start(stop.signal);
  });
  after(async () => {
    stop?.abort(new Error('test done'));
    await done?.catch(() => {});
    await scopes?.close();
    await env?.close();
  });

  const get = (name: string) => env.api.get(mapoKinds.MachineSet, { namespace: MAPI_NAMESPACE, name });
  const setFrom = (name: string, edit: (value: Record<string, unknown>) => void): MachineSet => {
    const set = structuredClone(env.machineSet);
    set.metadata = { name, namespace: MAPI_NAMESPACE, annotations: { 'team.example/owner': 'ops' } };
    edit(set.spec!.template!.spec!.providerSpec!.value as Record<string, unknown>);
    return set;
  };
  const warnings = async (name: string) =>
    (await env.api.listAll(kinds.Event, { namespace: MAPI_NAMESPACE })).items.filter(
      (e) =>
        e.involvedObject.kind === 'MachineSet' &&
        e.involvedObject.name === name &&
        e.type === 'Warning' &&
        e.reason === MachineSetFlavorEventReasons.ReconcileError,
    );
  const flavorLookups = (since: number) =>
    env.sim.cloud.stats
      .requests(since, { service: 'nova', caller: USER_AGENT })
      .requests.filter((r) => r.operation.includes('/flavors'));

  it("the installer's worker MachineSet gets m1.xlarge's vCPU and memoryMb; its other annotations stay", async () => {
    const name = env.machineSet.metadata!.name!;
    await env.api.create(mapoKinds.MachineSet, {
      ...env.machineSet,
      metadata: { ...env.machineSet.metadata, annotations: { 'team.example/owner': 'ops' } },
    });
    const annotated = await eventually(
      async () => {
        const s = await get(name);
        return s.metadata?.annotations?.[Annotations.VCPU] ? s : undefined;
      },
      { ...WAIT, what: `MachineSet ${name} annotated` },
    );
    assert.deepEqual(annotated!.metadata?.annotations, {
      'team.example/owner': 'ops',
      [Annotations.VCPU]: '8',
      [Annotations.MemoryMb]: '16384',
    });
  });

  it('three MachineSets of one flavor and identity cost one flavor lookup', async () => {
    const since = env.sim.cloud.stats.requests().last;
    const names = ['a', 'b', 'c'].map((s) => `ostest-7xk2p-large-${s}`);
    await Promise.all(
      names.map((n) =>
        env.api.create(
          mapoKinds.MachineSet,
          setFrom(n, (v) => {
            v.flavor = 'm1.large';
          }),
        ),
      ),
    );
    for (const n of names) {
      await eventually(async () => (await get(n)).metadata?.annotations?.[Annotations.VCPU] === '4', {
        ...WAIT,
        what: `MachineSet ${n} annotated`,
      });
      assert.equal((await get(n)).metadata?.annotations?.[Annotations.MemoryMb], '8192');
    }
    assert.equal(flavorLookups(since).length, 1, JSON.stringify(flavorLookups(since)));
  });

  it('an unknown flavor: a Warning Event naming the MachineSet and the flavor, no annotation', async () => {
    const name = 'ostest-7xk2p-unknown-flavor';
    await env.api.create(
      mapoKinds.MachineSet,
      setFrom(name, (v) => {
        v.flavor = 'm9.nonexistent';
      }),
    );
    const event = await eventually(async () => (await warnings(name))[0], {
      ...WAIT,
      what: `a ReconcileError Event on ${name}`,
    });
    assert.match(
      event!.message ?? '',
      new RegExp(
        `MachineSet ${MAPI_NAMESPACE}/${name}: could not find information for flavor "m9\\.nonexistent"`,
      ),
    );
    const s = await get(name);
    assert.deepEqual(s.metadata?.annotations, { 'team.example/owner': 'ops' });
  });

  it('a provider spec without a flavor: a Warning Event naming the field, no annotation', async () => {
    const name = 'ostest-7xk2p-no-flavor';
    await env.api.create(
      mapoKinds.MachineSet,
      setFrom(name, (v) => {
        delete v.flavor;
      }),
    );
    const event = await eventually(async () => (await warnings(name))[0], {
      ...WAIT,
      what: `a ReconcileError Event on ${name}`,
    });
    assert.match(event!.message ?? '', /spec\.template\.spec\.providerSpec\.value\.flavor/);
    assert.deepEqual((await get(name)).metadata?.annotations, { 'team.example/owner': 'ops' });
  });
});
