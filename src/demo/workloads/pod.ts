/**
 * One pod of the runner: its root directory, ports, identity, volumes and containers, set up the
 * way the kubelet's pod workers do it, and retried on each sync until it can start:
 *
 * - the ServiceAccount must exist (the ServiceAccount admission's FailedCreate), the volumes must
 *   mount (FailedMount), the env must resolve (CreateContainerConfigError);
 * - then every container starts (container.ts) with its shiftstack args after `$(VAR)`
 *   expansion, mount-path (paths.ts) and port (ports.ts) rewriting, and an environment of its own
 *   (pod-spec.ts) plus `HOSTNAME` (the pod name), `HOME` (the pod root), `PATH` and `KUBECONFIG`
 *   (identity.ts);
 * - once running, each sync refreshes its volumes (ConfigMap and Secret changes reach the files).
 *
 * A pod whose template the emulated cluster cannot run is created all the same, and waits forever
 * with the refusal as its reason, as a pod with an image that cannot be pulled does.
 */
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import type { V1PodTemplateSpec, V1ServiceAccount } from '@kubernetes/client-node';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import type { KubeClient } from '../../kube/index.ts';
import { ContainerRun, RestartBackoff, type ContainerPlan } from './container.ts';
import { expand } from './expand.ts';
import { automount, requestToken, writePodKubeconfig, type ClusterEndpoint } from './identity.ts';
import { PodPaths } from './paths.ts';
import {
  ContainerConfigError,
  resolveEnv,
  shiftstackArgs,
  type ObjectSource,
  type PodFacts,
  type Refusal,
} from './pod-spec.ts';
import { allocatePorts, podPorts, rewritePorts, type PortMap } from './ports.ts';
import { probeSpec } from './probes.ts';
import { MountError, PodVolumes } from './volumes.ts';

export interface PodSource extends ObjectSource {
  serviceAccount(namespace: string, name: string): Promise<V1ServiceAccount | undefined>;
}

export interface PodDeps {
  api: KubeClient;
  source: PodSource;
  cluster: ClusterEndpoint;
  /** The Node binary and the bin/shiftstack.js it runs. */
  node: string;
  script: string;
  /** Where shiftstack is installed (the image's SHIFTSTACK_HOME). */
  home: string;
  nodeName: string;
  log: Logger;
  clock: Clock;
  scale: (ms: number) => number;
  backoff: { initialMs: number; maxMs: number };
  hostDir: (path: string) => string;
  changed: () => void;
  warn: (reason: string, message: string) => void;
}

/** Why a pod waits, as the kubelet or a controller would say it. */
export interface PodProblem {
  reason: string;
  message: string;
}

class PodSetupError extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

const HOST_IP = '127.0.0.1';

export class Pod {
  readonly name: string;
  readonly replicaSet: string;
  readonly root: string;
  readonly facts: PodFacts;
  readonly createdAtMs: number;
  containers: ContainerRun[] = [];
  waiting: PodProblem | undefined;
  stopping = false;
  private readonly template: V1PodTemplateSpec;
  private readonly refusal: Refusal | undefined;
  private readonly deps: PodDeps;
  private volumes: PodVolumes | undefined;
  private ports: PortMap | undefined;
  private readySinceMs: number | undefined;

  constructor(
    name: string,
    replicaSet: string,
    root: string,
    template: V1PodTemplateSpec,
    refusal: Refusal | undefined,
    deps: PodDeps,
  ) {
    this.name = name;
    this.replicaSet = replicaSet;
    this.root = root;
    this.template = template;
    this.refusal = refusal;
    this.deps = deps;
    this.createdAtMs = deps.clock.now();
    const spec = template.spec;
    this.facts = {
      name,
      namespace: '',
      uid: randomUUID(),
      nodeName: deps.nodeName,
      serviceAccountName: spec?.serviceAccountName ?? spec?.serviceAccount ?? 'default',
      labels: { ...template.metadata?.labels },
      annotations: { ...template.metadata?.annotations },
      hostIP: HOST_IP,
    };
    this.waiting = refusal ?? { reason: 'ContainerCreating', message: '' };
  }

  get started(): boolean {
    return this.containers.length > 0;
  }

  /** Every container ready. */
  ready(): boolean {
    return this.started && !this.stopping && this.containers.every((c) => c.ready);
  }

  /** When it became ready, while it is. */
  readySince(): number | undefined {
    return this.ready() ? this.readySinceMs : undefined;
  }

  /** Something a container reports changed: readiness is looked at again. */
  noteChange(): void {
    if (!this.ready()) this.readySinceMs = undefined;
    else this.readySinceMs ??= this.deps.clock.now();
  }

  /** Sets up and starts the pod if it has not started yet, else refreshes its volumes. */
  async sync(namespace: string, signal: AbortSignal): Promise<PodProblem | undefined> {
    if (this.stopping || this.refusal) return undefined;
    (this.facts as { namespace: string }).namespace = namespace;
    if (this.started) {
      await this.volumes?.refresh();
      return undefined;
    }
    try {
      await this.setUp(signal);
      this.waiting = undefined;
      return undefined;
    } catch (err) {
      const problem =
        err instanceof MountError
          ? { reason: 'FailedMount', message: err.message }
          : err instanceof ContainerConfigError
            ? { reason: 'Failed', message: `Error: ${err.message}` }
            : err instanceof PodSetupError
              ? { reason: err.reason, message: err.message }
              : undefined;
      if (!problem) throw err;
      this.waiting = {
        reason: err instanceof ContainerConfigError ? 'CreateContainerConfigError' : problem.reason,
        message: problem.message,
      };
      return problem;
    }
  }

  private async setUp(signal: AbortSignal): Promise<void> {
    const spec = this.template.spec!;
    const { namespace, serviceAccountName: sa } = this.facts;
    const account = await this.deps.source.serviceAccount(namespace, sa);
    if (!account) {
      throw new PodSetupError(
        'FailedCreate',
        `Error creating: pods "${this.name}" is forbidden: error looking up service account ${namespace}/${sa}: serviceaccount "${sa}" not found`,
      );
    }
    await mkdir(this.root, { recursive: true });
    this.ports ??= await allocatePorts(podPorts(spec.containers));
    const paths = new PodPaths(
      this.root,
      spec.containers.flatMap((c) => (c.volumeMounts ?? []).map((m) => m.mountPath)),
    );
    const { api, clock } = this.deps;
    this.volumes = new PodVolumes(this.root, spec, {
      pod: this.facts,
      paths,
      source: this.deps.source,
      tokens: {
        token: (audience, expirationSeconds) =>
          requestToken(
            api,
            namespace,
            sa,
            { expirationSeconds, ...(audience ? { audiences: [audience] } : {}) },
            signal,
          ),
      },
      hostDir: this.deps.hostDir,
      now: () => clock.now(),
    });
    await this.volumes.setUp();
    const kubeconfig = automount(spec.automountServiceAccountToken, account)
      ? await writePodKubeconfig(api, this.deps.cluster, this.root, namespace, sa, signal)
      : undefined;

    const plans: ContainerPlan[] = [];
    for (const c of spec.containers) {
      const env = await resolveEnv(c, this.facts, this.deps.source);
      const args = shiftstackArgs(c);
      if (!Array.isArray(args)) throw new PodSetupError(args.reason, args.message);
      const probe = (p: typeof c.readinessProbe) =>
        p ? probeSpec(p, c, this.ports!, HOST_IP, this.deps.scale) : undefined;
      plans.push({
        name: c.name,
        args: args.map((a) => rewritePorts(paths.rewrite(expand(a, env)), this.ports!)),
        env: {
          PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
          HOME: this.root,
          HOSTNAME: this.name,
          // The image's ENV.
          NODE_ENV: 'production',
          SHIFTSTACK_HOME: this.deps.home,
          ...(kubeconfig ? { KUBECONFIG: kubeconfig } : {}),
          ...Object.fromEntries([...env].map(([k, v]) => [k, paths.rewrite(v)])),
        },
        readiness: probe(c.readinessProbe),
        liveness: probe(c.livenessProbe),
      });
    }
    if (this.stopping) return;
    this.containers = plans.map(
      (plan) =>
        new ContainerRun(plan, {
          node: this.deps.node,
          script: this.deps.script,
          root: this.root,
          pod: this.name,
          log: this.deps.log,
          clock,
          backoff: new RestartBackoff(this.deps.backoff.initialMs, this.deps.backoff.maxMs),
          graceMs: this.graceMs(),
          changed: () => {
            this.noteChange();
            this.deps.changed();
          },
          warn: this.deps.warn,
        }),
    );
    for (const c of this.containers) c.start();
  }

  /** `terminationGracePeriodSeconds` (30 s by default), scaled. */
  graceMs(): number {
    return this.deps.scale((this.template.spec?.terminationGracePeriodSeconds ?? 30) * 1000);
  }

  /** Stops every container: SIGTERM, SIGKILL after the grace period or once `hard` aborts. */
  async stop(hard?: AbortSignal): Promise<void> {
    this.stopping = true;
    this.noteChange();
    await Promise.all(this.containers.map((c) => c.stop(hard)));
  }

  /** SIGKILL to every process now (the runner's process is exiting). */
  killNow(): void {
    for (const c of this.containers) c.killNow();
  }

  /** Container port → the host port it was given (ports.ts), once the pod is set up. */
  hostPorts(): ReadonlyMap<number, number> {
    return this.ports ?? new Map();
  }

  /** Pids of the processes still running. */
  livePids(): number[] {
    return this.containers.flatMap((c) => (c.pid === undefined ? [] : [c.pid]));
  }
}
