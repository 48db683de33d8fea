/**
 * buildKuryrController on the kuryr bed: `[kubernetes] enabled_handlers` decides which controllers
 * run (upstream's handler names → ours), the project is the credentials' when
 * `[neutron_defaults] project` is empty, `controller_ha` campaigns on the Lease kuryr-controller, and a
 * handler or driver this build does not hold stops it before anything connects to the cluster.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kinds, type Manager } from '../kube/index.ts';
import { kubeConfigFrom } from '../kube/testing/env.ts';
import { createLogger } from '../lib/log.ts';
import { createRegistry } from '../lib/metrics.ts';
import { eventually } from '../sim/openstack/testing/harness.ts';
import { buildKuryrController, KURYR_LEASE_NAME, KuryrBuildError } from './cmd.ts';
import type { KuryrContext } from './context.ts';
import { withOptions } from './options.ts';
import type { RegisterKuryrController } from './registry.ts';
import { startKuryrEnv, type KuryrEnv } from './testing/env.ts';

const log = createLogger({ level: 'silent' });

/** A controller that records each pod it reconciles and the context it was given. */
function recording(name: string, seen: Map<string, KuryrContext>, pods: string[]): RegisterKuryrController {
  return (mgr: Manager, ctx: KuryrContext) => {
    seen.set(name, ctx);
    mgr
      .controller(name)
      .for(kinds.Pod)
      .complete((req) => {
        pods.push(`${name}:${req.namespace}/${req.name}`);
        return Promise.resolve({});
      });
  };
}

describe('buildKuryrController', () => {
  let env: KuryrEnv;
  before(async () => {
    env = await startKuryrEnv({ nodes: 1 });
  });
  after(async () => {
    await env?.close();
  });

  it("runs the controllers of the handlers enabled, in the credentials' project, leading on the Lease", async () => {
    const seen = new Map<string, KuryrContext>();
    const pods: string[] = [];
    const registry = createRegistry({ defaultMetrics: false });
    const controllers = Object.fromEntries(
      ['pod', 'kuryrport', 'service', 'endpointslice'].map((n) => [n, recording(n, seen, pods)]),
    );
    const built = await buildKuryrController(
      {
        options: withOptions(
          {
            kubernetes: { enabledHandlers: ['vif', 'kuryrport'], controllerHa: true },
            neutronDefaults: { project: '' },
            healthServer: { port: 0 },
            prometheusExporter: { controllerExporterPort: 0 },
          },
          env.options,
        ),
        cloud: env.target.demo,
        leaseNamespace: 'default',
        host: '127.0.0.1',
      },
      {
        log,
        kubeConfig: kubeConfigFrom(env.kube.kubeconfigPath),
        registry,
        controllers,
        gracefulShutdownTimeoutMs: 2_000,
      },
    );
    assert.deepEqual(built.controllers, ['pod', 'kuryrport']);
    // Upstream's exporter: the quota left in the project, read from Neutron on each scrape.
    const free = async () => {
      const text = await registry.metrics();
      return Number(/^kuryr_quota_free_count\{resource="ports"\} (-?\d+)$/m.exec(text)?.[1]);
    };
    const before = await free();
    assert.ok(Number.isFinite(before) && before > 0, await registry.metrics());
    const extra = await env.os.network.ports.create({
      network_id: env.net.pods.networkId,
      name: 'quota-probe',
    });
    try {
      assert.equal(await free(), before - 1);
    } finally {
      await env.os.network.ports.delete(extra.id);
    }
    assert.deepEqual([...seen.keys()], ['pod', 'kuryrport']);
    assert.equal(built.ctx.projectId, env.projectId);
    assert.equal(built.ctx.subnets.name, 'default');
    const stop = new AbortController();
    const running = built.run(stop.signal);
    try {
      await eventually(
        async () =>
          (
            await env.api
              .get(kinds.Lease, { namespace: 'default', name: KURYR_LEASE_NAME })
              .catch(() => undefined)
          )?.spec?.holderIdentity,
        { timeoutMs: 30_000, intervalMs: 50, what: 'the Lease held' },
      );
      await env.ensureNamespace('cmd-test');
      await env.api.create(kinds.Pod, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p', namespace: 'cmd-test' },
        spec: { containers: [{ name: 'c', image: 'x' }] },
      });
      await eventually(() => pods.includes('pod:cmd-test/p') && pods.includes('kuryrport:cmd-test/p'), {
        timeoutMs: 30_000,
        intervalMs: 25,
        what: 'both controllers reconciled the pod',
      });
      assert.ok(!pods.some((p) => p.startsWith('service:')), 'service is not enabled');
    } finally {
      stop.abort();
      await running;
    }
  });

  it('a handler or a driver this build does not hold: a KuryrBuildError naming it, before anything starts', async () => {
    const base = {
      cloud: env.target.demo,
      host: '127.0.0.1',
    };
    const deps = { log, kubeConfig: kubeConfigFrom(env.kube.kubeconfigPath), controllers: {} };
    await assert.rejects(
      buildKuryrController(
        {
          ...base,
          options: withOptions({ kubernetes: { enabledHandlers: ['vif', 'policy'] } }, env.options),
        },
        deps,
      ),
      (err: unknown) =>
        err instanceof KuryrBuildError &&
        /controller\(s\) pod, networkpolicy, which this build/.test(err.message),
    );
    await assert.rejects(
      buildKuryrController(
        {
          ...base,
          options: withOptions(
            {
              kubernetes: { enabledHandlers: [], podSubnetsDriver: 'namespace' },
              healthServer: { port: 0 },
              prometheusExporter: { controllerExporterPort: 0 },
            },
            env.options,
          ),
        },
        { ...deps, registry: createRegistry({ defaultMetrics: false }) },
      ),
      (err: unknown) =>
        err instanceof KuryrBuildError &&
        /pod_subnets_driver = namespace is not in this build/.test(err.message),
    );
  });
});
