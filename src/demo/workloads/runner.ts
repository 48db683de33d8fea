/**
 * The WorkloadRunner: the emulated cluster's stand-in for the Deployment, ReplicaSet and
 * DaemonSet controllers, the scheduler and the kubelet, for shiftstack's own Deployments and
 * DaemonSets. For Deployments in the namespaces it is given, whose containers use the shiftstack
 * image, it runs `spec.replicas` pods as child processes of this one (pod.ts), rolls template
 * changes out as the Deployment controller does (rollout.ts), and writes the Deployment's status
 * (status.ts). It plays one node (`nodeName`): a DaemonSet runs one pod when that Node exists and
 * the pod belongs on it (daemonset.ts: nodeSelector, required node affinity, taints), none
 * otherwise, replaced on a template change as the DaemonSet controller's RollingUpdate does (the
 * old pod stops first).
 *
 * There are no ReplicaSet or Pod objects: the ReplicaSets (`<deployment>-<pod-template-hash>`) and
 * pods (`<replicaset>-<5 characters>`) live in this process, and what the kubelet would report on
 * a Pod goes to Events on the Deployment (FailedMount, BackOff, Unhealthy, the refusals), with the
 * Deployment controller's own ScalingReplicaSet Events. Deleting the Deployment, or its leaving
 * the runner's namespaces, stops its pods (SIGTERM, then SIGKILL after
 * terminationGracePeriodSeconds), and so does the runner's stop, which leaves no process behind;
 * if this process exits without stopping, its exit hook kills what is left.
 *
 * Every duration of the kubelet and the controllers (probe periods and delays, the restart
 * back-off, grace periods, minReadySeconds, the progress deadline) is multiplied by `timeScale`.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeConfig, V1DaemonSet, V1Deployment, V1PodTemplateSpec } from '@kubernetes/client-node';
import type { Logger } from '../../lib/log.ts';
import {
  keyString,
  kinds,
  patchStatus,
  specOrMetadataChanged,
  type KubernetesObject,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
  type Runnable,
  type RunContext,
} from '../../kube/index.ts';
import { daemonSetStatus, notForNode } from './daemonset.ts';
import { clusterEndpoint, type ClusterEndpoint } from './identity.ts';
import { podTemplateHash, randomSuffix } from './names.ts';
import { Pod, type PodDeps, type PodSource } from './pod.ts';
import { refusals, type Refusal } from './pod-spec.ts';
import { planRollout, type ReplicaSetView, type Strategy } from './rollout.ts';
import { deploymentStatus, type ReplicaSetCounts } from './status.ts';

export const WORKLOAD_RUNNER = 'demo-workload-runner';
/** The controller of the DaemonSets it runs. */
export const DAEMONSET_RUNNER = 'demo-daemonset-runner';

/** The workload kinds the runner runs. */
export type WorkloadKind = 'Deployment' | 'DaemonSet';

const CHECKOUT = fileURLToPath(new URL('../../../', import.meta.url));

export interface WorkloadRunnerOptions {
  /** The namespaces whose Deployments it runs. */
  namespaces: readonly string[];
  /** The image references it runs (shiftstack's); any other is refused with a Warning Event. */
  images: readonly string[];
  /** The cluster the pods reach (its server and CA go into their kubeconfigs). */
  kubeConfig: KubeConfig;
  /** Where pod roots (and hostPath volumes not mapped in `hostPaths`) go. */
  dir: string;
  /** hostPath volumes: a host path → the directory that plays it. */
  hostPaths?: Readonly<Record<string, string>>;
  /** Multiplies every duration of the kubelet and the controllers (default 1). */
  timeScale?: number;
  /**
   * `spec.nodeName` of every pod (default: this host's name), and the Node whose labels and taints
   * decide whether a DaemonSet's pod runs.
   */
  nodeName?: string;
  log?: Logger;
}

interface ReplicaSetRun {
  /** The ReplicaSet's name; a DaemonSet's ControllerRevision. */
  name: string;
  /** Its pods' names are this and 5 characters (the ReplicaSet's name; the DaemonSet's). */
  podPrefix: string;
  hash: string;
  template: V1PodTemplateSpec;
  refusal: Refusal | undefined;
  desired: number;
  pods: Pod[];
  terminating: Set<Pod>;
  createdAtMs: number;
}

interface DeploymentRun {
  kind: WorkloadKind;
  key: string;
  uid: string;
  sets: Map<string, ReplicaSetRun>;
  /** Pod problems already reported, so a retry does not repeat the Event. */
  reported: Map<string, string>;
}

/** What a test or the demo can see of a pod. */
export interface PodView {
  name: string;
  replicaSet: string;
  root: string;
  ready: boolean;
  stopping: boolean;
  waiting: string | undefined;
  restartCount: number;
  /** The waits before each restart (CrashLoopBackOff). */
  backoffs: number[];
  /** The running processes' pids. */
  pids: number[];
  /** Every pid its containers ever had. */
  allPids: number[];
  /** Container port → host port: where this machine reaches what the pod serves (ports.ts). */
  hostPorts: ReadonlyMap<number, number>;
}

/** Registers the runner's controller and its lifetime on `mgr`. */
export function registerWorkloadRunner(mgr: Manager, opts: WorkloadRunnerOptions): WorkloadRunner {
  const runner = new WorkloadRunner(mgr, opts);
  const ours = (o: KubernetesObject) => opts.namespaces.includes(o.metadata?.namespace ?? '');
  const inNamespace = {
    create: ours,
    update: (a: KubernetesObject, b: KubernetesObject) => ours(a) || ours(b),
    delete: ours,
  };
  const workloadsOf = (kind: WorkloadKind) => (o: KubernetesObject) =>
    ours(o) ? runner.deploymentsIn(o.metadata?.namespace ?? '', kind) : [];
  const controller = mgr
    .controller(WORKLOAD_RUNNER)
    .for(kinds.Deployment, { predicates: [inNamespace, specOrMetadataChanged()] })
    // Volumes follow their ConfigMaps and Secrets; a pod waiting for a ServiceAccount starts with it.
    .watches(kinds.ConfigMap, workloadsOf('Deployment'))
    .watches(kinds.Secret, workloadsOf('Deployment'))
    .watches(kinds.ServiceAccount, workloadsOf('Deployment'))
    .withOptions({ maxConcurrentReconciles: 4, needLeaderElection: false })
    .complete((req, signal, ctx) => runner.reconcile(req, signal, ctx));
  const nodeName = opts.nodeName ?? hostname();
  const daemons = mgr
    .controller(DAEMONSET_RUNNER)
    .for(kinds.DaemonSet, { predicates: [inNamespace, specOrMetadataChanged()] })
    .watches(kinds.ConfigMap, workloadsOf('DaemonSet'))
    .watches(kinds.Secret, workloadsOf('DaemonSet'))
    .watches(kinds.ServiceAccount, workloadsOf('DaemonSet'))
    // The node's labels and taints decide whether a daemon pod runs.
    .watches(kinds.Node, (o) => (o.metadata?.name === nodeName ? runner.daemonSets() : []))
    .withOptions({ maxConcurrentReconciles: 4, needLeaderElection: false })
    .complete((req, signal, ctx) => runner.reconcile(req, signal, ctx, 'DaemonSet'));
  runner.wake = (kind, key) => (kind === 'DaemonSet' ? daemons : controller).queue.add(key);
  mgr.add(runner);
  return runner;
}

export class WorkloadRunner implements Runnable {
  /** The runnable that owns the pods' lifetime (the controller is WORKLOAD_RUNNER). */
  readonly name = `${WORKLOAD_RUNNER}-pods`;
  readonly needLeaderElection = false;
  /** Queues a workload's key (set at registration). */
  wake: (kind: WorkloadKind, key: string) => void = () => undefined;
  private readonly mgr: Manager;
  private readonly opts: WorkloadRunnerOptions;
  private readonly log: Logger;
  private readonly cluster: ClusterEndpoint;
  private readonly runs = new Map<string, DeploymentRun>();
  /** Pods being stopped whose Deployment is gone. */
  private readonly orphans = new Set<Promise<void>>();
  private stopped = false;
  private readonly exitHook = () => this.killAll();

  constructor(mgr: Manager, opts: WorkloadRunnerOptions) {
    this.mgr = mgr;
    this.opts = opts;
    this.log = opts.log ?? mgr.log.child({ component: WORKLOAD_RUNNER });
    this.cluster = clusterEndpoint(opts.kubeConfig);
  }

  /** Runs until `signal` aborts, then stops every pod (SIGKILL at once when `hardStop` aborts). */
  async start(signal: AbortSignal, ctx: RunContext): Promise<void> {
    process.once('exit', this.exitHook);
    try {
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
      this.stopped = true;
      // A pod created by a sync still in flight is stopped too: look again until none is left.
      for (let round = 0; round < 10; round++) {
        const all = [...this.runs.values()].flatMap((r) =>
          [...r.sets.values()].flatMap((s) => [...s.pods, ...s.terminating]),
        );
        if (all.length === 0 && this.orphans.size === 0) break;
        await Promise.all([...all.map((p) => p.stop(ctx.hardStop)), ...this.orphans]);
        for (const r of this.runs.values()) for (const s of r.sets.values()) s.pods = [];
        this.runs.clear();
      }
    } finally {
      process.removeListener('exit', this.exitHook);
    }
  }

  /** The keys of the workloads of `kind` it runs in `namespace`. */
  deploymentsIn(namespace: string, kind: WorkloadKind = 'Deployment'): Request[] {
    return [...this.runs.values()]
      .filter((r) => r.kind === kind && r.key.startsWith(`${namespace}/`))
      .map((r) => ({ namespace, name: r.key.slice(namespace.length + 1) }));
  }

  /** The keys of every DaemonSet in its namespaces (a change of its node concerns them all). */
  daemonSets(): Request[] {
    return this.opts.namespaces.flatMap((namespace) => this.deploymentsIn(namespace, 'DaemonSet'));
  }

  /** The pods of a Deployment (or DaemonSet), those being stopped included. */
  pods(namespace: string, name: string, kind: WorkloadKind = 'Deployment'): PodView[] {
    const run = this.runs.get(runKey(kind, `${namespace}/${name}`));
    if (!run) return [];
    return [...run.sets.values()].flatMap((s) => [...s.pods, ...s.terminating].map(view));
  }

  async reconcile(
    req: Request,
    signal: AbortSignal,
    ctx: ReconcileContext,
    kind: WorkloadKind = 'Deployment',
  ): Promise<Result> {
    if (this.stopped) return {};
    const key = keyString(req);
    const d =
      kind === 'DaemonSet'
        ? await this.mgr.client.get(kinds.DaemonSet, req, { signal })
        : await this.mgr.client.get(kinds.Deployment, req, { signal });
    const run = this.runs.get(runKey(kind, key));
    if (!d || d.metadata?.deletionTimestamp || !this.opts.namespaces.includes(req.namespace ?? '')) {
      if (run) this.forget(run, ctx.log, `${kind} gone: its pods stop`);
      return {};
    }
    if (run && run.uid !== d.metadata?.uid) this.forget(run, ctx.log, `${kind} replaced: the old pods stop`);
    const current = this.runs.get(runKey(kind, key)) ?? this.track(kind, key, d);
    return kind === 'DaemonSet'
      ? this.syncDaemonSet(current, d as V1DaemonSet, signal)
      : this.sync(current, d, signal);
  }

  private track(kind: WorkloadKind, key: string, d: KubernetesObject): DeploymentRun {
    const run: DeploymentRun = {
      kind,
      key,
      uid: d.metadata?.uid ?? '',
      sets: new Map(),
      reported: new Map(),
    };
    this.runs.set(runKey(kind, key), run);
    return run;
  }

  private forget(run: DeploymentRun, log: Logger, why: string): void {
    this.runs.delete(runKey(run.kind, run.key));
    const pods = [...run.sets.values()].flatMap((s) => [...s.pods, ...s.terminating]);
    if (pods.length === 0) return;
    log.info({ pods: pods.map((p) => p.name) }, why);
    const done = Promise.all(pods.map((p) => p.stop())).then(() => undefined);
    this.orphans.add(done);
    void done.finally(() => this.orphans.delete(done));
  }

  private async sync(run: DeploymentRun, d: V1Deployment, signal: AbortSignal): Promise<Result> {
    const spec = d.spec!;
    const ns = d.metadata?.namespace ?? '';
    const name = d.metadata?.name ?? '';
    const replicas = spec.replicas ?? 1;
    const strategy: Strategy = {
      type: spec.strategy?.type === 'Recreate' ? 'Recreate' : 'RollingUpdate',
      maxSurge: spec.strategy?.rollingUpdate?.maxSurge,
      maxUnavailable: spec.strategy?.rollingUpdate?.maxUnavailable,
    };
    const hash = podTemplateHash(spec.template, d.status?.collisionCount);
    let current = run.sets.get(hash);
    const created = !current;
    if (!current) {
      const refused = refusals(spec.template.spec!, this.opts.images);
      current = {
        name: `${name}-${hash}`,
        podPrefix: `${name}-${hash}`,
        hash,
        template: structuredClone(spec.template),
        refusal: refused[0],
        desired: 0,
        pods: [],
        terminating: new Set(),
        createdAtMs: this.mgr.clock.now(),
      };
      run.sets.set(hash, current);
      for (const r of refused) this.mgr.events.event(d, 'Warning', r.reason, r.message);
    }
    const old = [...run.sets.values()].filter((s) => s !== current);

    const minReadyMs = this.scale((spec.minReadySeconds ?? 0) * 1000);
    const plan = planRollout(
      replicas,
      strategy,
      this.view(current, minReadyMs),
      old.map((s) => this.view(s, minReadyMs)),
    );
    for (const [rsName, next] of plan) {
      const rs = [...run.sets.values()].find((s) => s.name === rsName)!;
      if (rs.desired === next) continue;
      this.mgr.events.event(
        d,
        'Normal',
        'ScalingReplicaSet',
        `Scaled ${next > rs.desired ? 'up' : 'down'} replica set ${rs.name} from ${rs.desired} to ${next}`,
      );
      rs.desired = next;
    }
    for (const rs of run.sets.values()) this.scalePods(run, rs, ns);
    await this.syncPods(run, d, ns, signal);
    // ReplicaSets with nothing left are history (revisionHistoryLimit keeps none here).
    for (const [h, rs] of run.sets) {
      if (rs !== current && rs.desired === 0 && rs.pods.length === 0 && rs.terminating.size === 0)
        run.sets.delete(h);
    }

    const counts = (s: ReplicaSetRun): ReplicaSetCounts => {
      const v = this.view(s, minReadyMs);
      return {
        name: s.name,
        desired: s.desired,
        active: v.active,
        ready: s.pods.filter((p) => p.ready()).length,
        available: v.available,
      };
    };
    const status = deploymentStatus({
      deployment: d,
      strategy,
      current: counts(current),
      old: [...run.sets.values()].filter((s) => s !== current).map(counts),
      created,
      nowMs: this.mgr.clock.now(),
    });
    await patchStatus(this.mgr.api, kinds.Deployment, d, { ...d, status }, { signal });
    return this.nextLook(run, minReadyMs, spec.progressDeadlineSeconds);
  }

  /**
   * A DaemonSet on the one node: one pod of the current template when it belongs there (the
   * RollingUpdate of one node: the old pod stops before the new one starts), none otherwise.
   */
  private async syncDaemonSet(run: DeploymentRun, ds: V1DaemonSet, signal: AbortSignal): Promise<Result> {
    const spec = ds.spec!;
    const ns = ds.metadata?.namespace ?? '';
    const name = ds.metadata?.name ?? '';
    const nodeName = this.opts.nodeName ?? hostname();
    const node = await this.mgr.client.get(kinds.Node, { name: nodeName }, { signal });
    const elsewhere = node ? notForNode(node, spec.template.spec!) : `node ${nodeName} does not exist`;
    const hash = podTemplateHash(spec.template, ds.status?.collisionCount);
    let current = run.sets.get(hash);
    if (!current) {
      const refused = refusals(spec.template.spec!, this.opts.images);
      current = {
        name: `${name}-${hash}`,
        podPrefix: name,
        hash,
        template: structuredClone(spec.template),
        refusal: refused[0],
        desired: 0,
        pods: [],
        terminating: new Set(),
        createdAtMs: this.mgr.clock.now(),
      };
      run.sets.set(hash, current);
      for (const r of refused) this.mgr.events.event(ds, 'Warning', r.reason, r.message);
    }
    const old = [...run.sets.values()].filter((s) => s !== current);
    const oldPods = old.reduce((n, s) => n + s.pods.length + s.terminating.size, 0);
    for (const s of old) s.desired = 0;
    // maxSurge 0 on one node: the new pod waits until the old one is gone.
    current.desired = elsewhere === undefined && oldPods === 0 ? 1 : 0;
    const before = new Set([...run.sets.values()].flatMap((s) => s.pods));
    for (const rs of run.sets.values()) this.scalePods(run, rs, ns);
    for (const rs of run.sets.values()) {
      for (const pod of rs.pods) {
        if (!before.has(pod))
          this.mgr.events.event(ds, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.name}`);
      }
      for (const pod of rs.terminating) {
        if (before.has(pod))
          this.mgr.events.event(ds, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.name}`);
      }
    }
    await this.syncPods(run, ds, ns, signal);
    for (const [h, rs] of run.sets) {
      if (rs !== current && rs.pods.length === 0 && rs.terminating.size === 0) run.sets.delete(h);
    }

    const minReadyMs = this.scale((spec.minReadySeconds ?? 0) * 1000);
    const pods = [...run.sets.values()].flatMap((s) => s.pods);
    const status = daemonSetStatus(ds, {
      desired: elsewhere === undefined ? 1 : 0,
      scheduled: pods.length,
      updated: current.pods.length,
      ready: pods.filter((p) => p.ready()).length,
      available:
        this.view(current, minReadyMs).available +
        old.reduce((n, s) => n + this.view(s, minReadyMs).available, 0),
    });
    await patchStatus(this.mgr.api, kinds.DaemonSet, ds, { ...ds, status }, { signal });
    return this.nextLook(run, minReadyMs, undefined);
  }

  /** Each pod's kubelet sync; a new problem is a Warning Event on the workload. */
  private async syncPods(run: DeploymentRun, owner: KubernetesObject, ns: string, signal: AbortSignal) {
    for (const rs of run.sets.values()) {
      for (const pod of rs.pods) {
        const problem = await pod.sync(ns, signal);
        if (problem && run.reported.get(pod.name) !== problem.message) {
          this.mgr.events.event(owner, 'Warning', problem.reason, `${pod.name}: ${problem.message}`);
        }
        if (problem) run.reported.set(pod.name, problem.message);
        else run.reported.delete(pod.name);
      }
    }
  }

  /** When to look again without an event: a pod becoming available, a pod waiting, the deadline. */
  private nextLook(run: DeploymentRun, minReadyMs: number, deadlineSeconds: number | undefined): Result {
    const now = this.mgr.clock.now();
    let next = this.scale(60_000);
    for (const rs of run.sets.values()) {
      for (const p of rs.pods) {
        const since = p.readySince();
        if (since !== undefined && since + minReadyMs > now) next = Math.min(next, since + minReadyMs - now);
        if (!p.started && !rs.refusal) next = Math.min(next, this.scale(2_000));
      }
    }
    if (deadlineSeconds !== undefined) next = Math.min(next, this.scale(deadlineSeconds * 1000) + 1);
    return { requeueAfterMs: Math.max(1, Math.round(next)) };
  }

  private view(s: ReplicaSetRun, minReadyMs: number): ReplicaSetView {
    const now = this.mgr.clock.now();
    return {
      name: s.name,
      desired: s.desired,
      active: s.pods.length,
      available: s.pods.filter((p) => {
        const since = p.readySince();
        return since !== undefined && since + minReadyMs <= now;
      }).length,
      terminating: s.terminating.size,
      createdAt: s.createdAtMs,
    };
  }

  /** The ReplicaSet controller: as many pods as desired, the least useful stopped first. */
  private scalePods(run: DeploymentRun, rs: ReplicaSetRun, namespace: string): void {
    while (rs.pods.length < rs.desired) {
      const name = `${rs.podPrefix}-${randomSuffix()}`;
      rs.pods.push(
        new Pod(
          name,
          rs.name,
          join(this.opts.dir, namespace, name),
          rs.template,
          rs.refusal,
          this.podDeps(run),
        ),
      );
    }
    if (rs.pods.length <= rs.desired) return;
    const order = [...rs.pods].sort(deletionOrder);
    for (const victim of order.slice(0, rs.pods.length - rs.desired)) {
      rs.pods = rs.pods.filter((p) => p !== victim);
      rs.terminating.add(victim);
      run.reported.delete(victim.name);
      void victim.stop().finally(() => {
        rs.terminating.delete(victim);
        this.wake(run.kind, run.key);
      });
    }
  }

  private podDeps(run: DeploymentRun): PodDeps {
    const source: PodSource = {
      configMap: (namespace, name) => this.mgr.client.get(kinds.ConfigMap, { namespace, name }),
      secret: (namespace, name) => this.mgr.client.get(kinds.Secret, { namespace, name }),
      serviceAccount: (namespace, name) => this.mgr.client.get(kinds.ServiceAccount, { namespace, name }),
    };
    return {
      api: this.mgr.api,
      source,
      cluster: this.cluster,
      node: process.execPath,
      script: join(CHECKOUT, 'bin', 'shiftstack.js'),
      home: CHECKOUT,
      nodeName: this.opts.nodeName ?? hostname(),
      log: this.log,
      clock: this.mgr.clock,
      scale: (ms) => this.scale(ms),
      backoff: { initialMs: this.scale(10_000), maxMs: this.scale(300_000) },
      hostDir: (path) => this.opts.hostPaths?.[path] ?? join(this.opts.dir, '.host', path),
      changed: () => this.wake(run.kind, run.key),
      warn: (reason, message) => {
        const [namespace, name] = run.key.split('/');
        this.mgr.events.event(
          { apiVersion: 'apps/v1', kind: run.kind, metadata: { namespace, name, uid: run.uid } },
          'Warning',
          reason,
          message,
        );
      },
    };
  }

  private scale(ms: number): number {
    return ms * (this.opts.timeScale ?? 1);
  }

  private killAll(): void {
    for (const r of this.runs.values()) {
      for (const s of r.sets.values()) for (const p of [...s.pods, ...s.terminating]) p.killNow();
    }
  }
}

/** The runner's key of a workload: Deployments and DaemonSets may share a name. */
function runKey(kind: WorkloadKind, key: string): string {
  return `${kind}:${key}`;
}

/** The ReplicaSet controller's deletion ranking, simplified: not started, not ready, newest first. */
function deletionOrder(a: Pod, b: Pod): number {
  const rank = (p: Pod) => (p.started ? (p.ready() ? 2 : 1) : 0);
  return rank(a) - rank(b) || b.createdAtMs - a.createdAtMs;
}

function view(p: Pod): PodView {
  return {
    name: p.name,
    replicaSet: p.replicaSet,
    root: p.root,
    ready: p.ready(),
    stopping: p.stopping,
    waiting: p.waiting?.reason,
    restartCount: p.containers.reduce((n, c) => n + c.restartCount, 0),
    backoffs: p.containers.flatMap((c) => c.backoffs),
    pids: p.livePids(),
    allPids: p.containers.flatMap((c) => c.pids),
    hostPorts: p.hostPorts(),
  };
}
