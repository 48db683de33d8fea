/**
 * One container of a pod as a child process: `node bin/shiftstack.js <args>` (pod-spec.ts says
 * why that is the image's own command), in its own process group, with the pod root as working
 * directory and only the environment the kubelet would give it (no variable of the runner's leaks
 * in but PATH).
 *
 * - Its stdout and stderr go, appended across restarts, to `<pod root>/logs/<container>.log`, and
 *   line by line, prefixed with the pod name, to the runner's logger at debug.
 * - It is restarted whenever it exits (restartPolicy Always, the only one a Deployment allows),
 *   with the kubelet's CrashLoopBackOff: the first restart at once, then 10 s doubling up to
 *   5 min (scaled), forgotten after a run of twice the maximum.
 * - Readiness and liveness probes run while it runs (probes.ts); a liveness failure stops it as a
 *   deletion would (SIGTERM, then SIGKILL after the grace period) and the restart follows the
 *   same back-off.
 * - `stop` sends SIGTERM to its process group, SIGKILL after `graceMs` (or at once when `hard`
 *   aborts), and resolves once the process has exited.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import { runProber, type ProbeSpec } from './probes.ts';

/** The kubelet's container restart back-off (`kubecontainer` backoff: 10 s, doubling, 5 min). */
export class RestartBackoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private backoffMs = 0;
  private lastRestartMs = Number.NEGATIVE_INFINITY;

  constructor(initialMs: number, maxMs: number) {
    this.initialMs = initialMs;
    this.maxMs = maxMs;
  }

  /** How long a container that exited at `exitMs` waits before its restart. */
  delay(exitMs: number): number {
    // The kubelet forgets a back-off not touched for twice its maximum.
    if (exitMs - this.lastRestartMs > 2 * this.maxMs) this.backoffMs = 0;
    return this.backoffMs;
  }

  /** The container was restarted at `nowMs`: the next wait doubles. */
  restarted(nowMs: number): void {
    this.backoffMs = this.backoffMs === 0 ? this.initialMs : Math.min(2 * this.backoffMs, this.maxMs);
    this.lastRestartMs = nowMs;
  }
}

export interface ContainerPlan {
  name: string;
  /** After `bin/shiftstack.js`. */
  args: string[];
  env: Record<string, string>;
  readiness: ProbeSpec | undefined;
  liveness: ProbeSpec | undefined;
}

export interface ContainerDeps {
  node: string;
  script: string;
  root: string;
  pod: string;
  log: Logger;
  clock: Clock;
  backoff: RestartBackoff;
  graceMs: number;
  /** Something another part of the runner reads changed (readiness, state, restarts). */
  changed(): void;
  /** A Warning worth an Event (liveness failure, back-off). */
  warn(reason: string, message: string): void;
}

export type ContainerState =
  | { state: 'waiting'; reason: string }
  | { state: 'running'; sinceMs: number }
  | { state: 'terminated'; exitCode: number | null; signal: string | null };

export class ContainerRun {
  readonly plan: ContainerPlan;
  restartCount = 0;
  ready = false;
  status: ContainerState = { state: 'waiting', reason: 'ContainerCreating' };
  /** The running process's pid, while it runs. */
  pid: number | undefined;
  /** Every pid this container has had (tests check none is left). */
  readonly pids: number[] = [];
  /** The waits before each restart, in order (CrashLoopBackOff). */
  readonly backoffs: number[] = [];
  private readonly deps: ContainerDeps;
  private readonly stopper = new AbortController();
  private child: ChildProcess | undefined;
  /** The current process has not exited yet. */
  private alive = false;
  private exited: Promise<void> | undefined;
  private loop: Promise<void> | undefined;
  private logFile: WriteStream | undefined;

  constructor(plan: ContainerPlan, deps: ContainerDeps) {
    this.plan = plan;
    this.deps = deps;
  }

  start(): void {
    this.loop ??= this.run().catch((err: unknown) => {
      this.deps.log.error({ err, pod: this.deps.pod, container: this.plan.name }, 'container loop failed');
    });
  }

  /** Stops the process (SIGTERM, SIGKILL after the grace period or when `hard` aborts) and its restarts. */
  async stop(hard?: AbortSignal): Promise<void> {
    this.stopper.abort(new Error('container stopping'));
    await this.kill(hard);
    await this.loop;
    await new Promise<void>((resolve) => (this.logFile ? this.logFile.end(resolve) : resolve()));
  }

  /** SIGKILL now, synchronously: the runner's process is exiting. */
  killNow(): void {
    if (this.alive && this.pid !== undefined) signalGroup(this.pid, 'SIGKILL');
  }

  private async run(): Promise<void> {
    const { clock, backoff } = this.deps;
    const logs = join(this.deps.root, 'logs');
    await mkdir(logs, { recursive: true });
    this.logFile = createWriteStream(join(logs, `${this.plan.name}.log`), { flags: 'a' });
    while (!this.stopper.signal.aborted) {
      this.spawnOnce();
      const probes = new AbortController();
      const probing = this.probe(probes.signal);
      await this.exited;
      probes.abort();
      await probing;
      this.ready = false;
      this.pid = undefined;
      if (this.stopper.signal.aborted) break;
      const wait = backoff.delay(clock.now());
      this.backoffs.push(wait);
      if (wait > 0) {
        this.status = { state: 'waiting', reason: 'CrashLoopBackOff' };
        this.deps.warn(
          'BackOff',
          `Back-off restarting failed container ${this.plan.name} in pod ${this.deps.pod}`,
        );
      }
      this.deps.changed();
      try {
        await clock.sleep(wait, this.stopper.signal);
      } catch {
        break;
      }
      backoff.restarted(clock.now());
      this.restartCount++;
    }
    this.deps.changed();
  }

  private spawnOnce(): void {
    const child = spawn(this.deps.node, [this.deps.script, ...this.plan.args], {
      cwd: this.deps.root,
      env: this.plan.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.alive = true;
    this.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        this.alive = false;
        this.status = { state: 'terminated', exitCode: code, signal };
        this.deps.log.debug(
          { pod: this.deps.pod, container: this.plan.name, code, signal },
          `${this.deps.pod}: container ${this.plan.name} exited`,
        );
        resolve();
      });
      // A spawn that fails never starts: it counts as an exit.
      child.once('error', (err) => {
        this.alive = false;
        this.deps.log.debug({ err, pod: this.deps.pod }, 'spawn failed');
        this.status = { state: 'terminated', exitCode: 128, signal: null };
        resolve();
      });
    });
    if (child.pid !== undefined) {
      this.pid = child.pid;
      this.pids.push(child.pid);
    }
    this.status = { state: 'running', sinceMs: this.deps.clock.now() };
    for (const stream of [child.stdout, child.stderr]) {
      stream?.pipe(this.logFile!, { end: false });
      let rest = '';
      stream?.on('data', (chunk: Buffer) => {
        const lines = (rest + chunk.toString('utf8')).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) if (line) this.deps.log.debug(`${this.deps.pod}: ${line}`);
      });
    }
    this.deps.changed();
  }

  private async probe(signal: AbortSignal): Promise<void> {
    const { readiness, liveness } = this.plan;
    const { clock } = this.deps;
    if (!readiness) {
      this.ready = true;
      this.deps.changed();
    }
    await Promise.all([
      readiness
        ? runProber(readiness, false, clock, signal, (ok) => {
            this.ready = ok;
            this.deps.changed();
          })
        : undefined,
      liveness
        ? runProber(liveness, true, clock, signal, (ok, message) => {
            if (ok) return;
            this.deps.warn('Unhealthy', `Liveness probe failed: ${message ?? ''}`);
            this.deps.log.info(
              { pod: this.deps.pod, container: this.plan.name },
              `${this.deps.pod}: container ${this.plan.name} failed liveness probe, will be restarted`,
            );
            void this.kill();
          })
        : undefined,
    ]);
  }

  private async kill(hard?: AbortSignal): Promise<void> {
    const child = this.child;
    const pid = this.pid;
    if (!child || pid === undefined || !this.exited || !this.alive) return;
    signalGroup(pid, 'SIGTERM');
    const grace = new AbortController();
    const stopGrace = () => grace.abort();
    hard?.addEventListener('abort', stopGrace, { once: true });
    const timer = this.deps.clock.setTimer(this.deps.graceMs, stopGrace);
    if (hard?.aborted) grace.abort();
    await Promise.race([
      this.exited,
      new Promise<void>((r) => grace.signal.addEventListener('abort', () => r())),
    ]);
    timer();
    hard?.removeEventListener('abort', stopGrace);
    if (this.alive && this.child === child) signalGroup(pid, 'SIGKILL');
    await this.exited;
  }
}

/** A signal to the process group the child leads (it runs detached), so nothing it started stays. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}
