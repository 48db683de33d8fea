/**
 * The test bed of the machine-api-operator stand-ins: the Kubernetes emulator with the Machine API
 * CRDs and a namespace, and the controllers in-process on a Manager of their own. No OpenStack:
 * Machines, Nodes and pods are objects the tests write, as the actuator, the kubelet and the
 * workloads would.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { customResourceDefinition } from '../../../kube/crd/kind.ts';
import type { ListOptions, WatchOptions } from '../../../kube/client.ts';
import {
  KubeClient,
  kinds,
  Manager,
  type KubernetesObject,
  type ListPage,
  type ResourceType,
  type WatchEvent,
} from '../../../kube/index.ts';
import { gate, kubeConfigFrom, testClient, type Gate } from '../../../kube/testing/env.ts';
import { createLogger } from '../../../lib/log.ts';
import { eventually, startTestKube, type TestKube } from '../../../sim/kube/testing/harness.ts';
import type { StartKubeSimOptions } from '../../../sim/kube/start.ts';
import {
  machine,
  machineSet,
  MACHINE_API_NAMESPACE,
  type Machine,
  type MachineSet,
} from '../../api/index.ts';
import { registerMachineAPIOperatorControllers, type MachineAPIOperatorOptions } from '../index.ts';

/** Scaled-down waits: the drain's back-off and polls. */
export const FAST: MachineAPIOperatorOptions = {
  drain: { backoff: { baseMs: 50, maxMs: 500 }, podDeletionPollMs: 50, requeueMs: 100 },
};

export interface MaoEnv {
  k: TestKube;
  api: KubeClient;
  namespace: string;
  /** Starts the controllers; `client` replaces the Manager's (a lagging cache). */
  start(opts?: MachineAPIOperatorOptions & { client?: KubeClient }): Promise<RunningMao>;
  close(): Promise<void>;
}

export interface RunningMao {
  mgr: Manager;
  stop(): Promise<void>;
}

export async function startMaoEnv(sim: StartKubeSimOptions = {}): Promise<MaoEnv> {
  const k = await startTestKube(sim);
  const api = testClient(k.kubeconfigPath);
  for (const kind of [machine, machineSet])
    await api.create(kinds.CustomResourceDefinition, customResourceDefinition(kind));
  await eventually(
    async () => {
      await api.listAll(machineSet.resource);
      return true;
    },
    { what: 'the Machine API CRDs served' },
  );
  await api.create(kinds.Namespace, { metadata: { name: MACHINE_API_NAMESPACE } });
  const running = new Set<RunningMao>();
  return {
    k,
    api,
    namespace: MACHINE_API_NAMESPACE,
    start(opts = {}) {
      const mgr = new Manager({
        name: 'machine-api-operator',
        ...(opts.client ? { client: opts.client } : { kubeConfig: kubeConfigFrom(k.kubeconfigPath) }),
        qps: 0,
        log: createLogger({ level: (process.env.LOG_LEVEL as 'debug' | undefined) ?? 'silent' }),
      });
      registerMachineAPIOperatorControllers(mgr, { ...FAST, ...opts });
      const ac = new AbortController();
      const done = mgr.start(ac.signal);
      const r: RunningMao = {
        mgr,
        async stop() {
          running.delete(r);
          ac.abort();
          await done;
        },
      };
      running.add(r);
      return Promise.resolve(r);
    },
    async close() {
      for (const r of [...running]) await r.stop();
      await api.close();
      await k.close();
    },
  };
}

/**
 * A client whose cache of Machines can be held back: while `hold()` is on, Machine watch events
 * and lists wait, so the controllers read Machines as they were — a cache lagging the API server.
 */
export class LaggingClient extends KubeClient {
  private held: Gate | undefined;

  constructor(kc: KubeConfig) {
    super(kc, { qps: 0 });
  }

  hold(): void {
    this.held ??= gate();
  }

  release(): void {
    this.held?.open();
    this.held = undefined;
  }

  override async *watch<T extends KubernetesObject>(
    type: ResourceType<T>,
    opts?: WatchOptions,
  ): AsyncGenerator<WatchEvent<T>, void, undefined> {
    for await (const ev of super.watch(type, opts)) {
      if (type.kind === 'Machine') while (this.held) await this.held.promise;
      yield ev;
    }
  }

  override async list<T extends KubernetesObject>(
    type: ResourceType<T>,
    opts?: ListOptions,
  ): Promise<ListPage<T>> {
    if (type.kind === 'Machine') while (this.held) await this.held.promise;
    return super.list(type, opts);
  }
}

/** A MachineSet as the installer writes one, scaled to `replicas`. */
export function machineSetBody(
  name: string,
  replicas: number,
  extra: { deletePolicy?: string; providerSpec?: Record<string, unknown>; minReadySeconds?: number } = {},
): MachineSet {
  const labels = {
    'machine.openshift.io/cluster-api-cluster': 'ostest',
    'machine.openshift.io/cluster-api-machineset': name,
  };
  return {
    apiVersion: 'machine.openshift.io/v1beta1',
    kind: 'MachineSet',
    metadata: {
      name,
      namespace: MACHINE_API_NAMESPACE,
      labels: { 'machine.openshift.io/cluster-api-cluster': 'ostest' },
    },
    spec: {
      replicas,
      ...(extra.deletePolicy ? { deletePolicy: extra.deletePolicy as 'Random' } : {}),
      ...(extra.minReadySeconds !== undefined ? { minReadySeconds: extra.minReadySeconds } : {}),
      selector: { matchLabels: labels },
      template: {
        metadata: {
          labels: { ...labels, 'machine.openshift.io/cluster-api-machine-role': 'worker' },
          annotations: { 'example.com/from-template': 'yes' },
        },
        spec: {
          metadata: { labels: { 'node-role.kubernetes.io/worker': '' } },
          providerSpec: {
            value: extra.providerSpec ?? {
              apiVersion: 'machine.openshift.io/v1alpha1',
              kind: 'OpenstackProviderSpec',
              flavor: 'm1.large',
            },
          },
        },
      },
    },
  };
}

/** A Machine the set's selector matches, created by the test (an orphan to adopt). */
export function machineBody(name: string, set: string, extra: Partial<Machine['metadata']> = {}): Machine {
  return {
    apiVersion: 'machine.openshift.io/v1beta1',
    kind: 'Machine',
    metadata: {
      name,
      namespace: MACHINE_API_NAMESPACE,
      ...extra,
      labels: {
        'machine.openshift.io/cluster-api-cluster': 'ostest',
        'machine.openshift.io/cluster-api-machineset': set,
        'machine.openshift.io/cluster-api-machine-role': 'worker',
        ...extra?.labels,
      },
    },
    spec: { providerSpec: { value: { kind: 'OpenstackProviderSpec', flavor: 'm1.large' } } },
  };
}
