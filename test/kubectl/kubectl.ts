/**
 * The real kubectl against a fresh Kubernetes emulator, for the tests in this folder: one
 * emulator per suite, a kubeconfig and cache of its own, and kubectl run as a user runs it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { StartKubeSimOptions } from '../../src/sim/kube/start.ts';
import { startTestKube, type TestKube } from '../../src/sim/kube/testing/harness.ts';

export const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Why the kubectl suites cannot run here, or undefined; in CI a missing kubectl is an error. */
export function kubectlMissing(): string | undefined {
  const missing = existsSync(KUBECTL) ? undefined : `no kubectl at ${KUBECTL} (set KUBECTL to its path)`;
  if (missing) {
    console.error(`\n*** KUBECTL TEST SKIPPED: ${missing} ***\n`);
    // Our machines have kubectl; in CI its absence is a broken machine, not a reason to pass.
    if (process.env.CI) throw new Error(`KUBECTL TEST CANNOT RUN: ${missing}`);
  }
  return missing;
}

export interface KubectlEnv {
  k: TestKube;
  /** Starts kubectl; `done` resolves when it exits. */
  start(
    args: string[],
    input?: string,
  ): { child: ReturnType<typeof spawn>; done: Promise<Run>; output(): string };
  /** Runs kubectl and asserts it succeeded; resolves to its stdout. */
  kubectl(...args: string[]): Promise<string>;
  /** The same, with `input` on stdin. */
  kubectlIn(input: string, ...args: string[]): Promise<string>;
  close(): Promise<void>;
}

/** `binary` runs another kubectl than KUBECTL (a pinned version); `kube` configures the emulator. */
export async function startKubectlEnv(binary = KUBECTL, kube: StartKubeSimOptions = {}): Promise<KubectlEnv> {
  const k = await startTestKube(kube);
  const env = { ...process.env, KUBECONFIG: k.kubeconfigPath, HOME: k.dir };
  const children = new Set<ReturnType<typeof spawn>>();
  const start: KubectlEnv['start'] = (args, input) => {
    const child = spawn(binary, ['--cache-dir', join(k.dir, 'cache'), ...args], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.end(input ?? '');
    const done = new Promise<Run>((resolve) =>
      child.once('exit', (code) => {
        children.delete(child);
        resolve({ code, stdout, stderr });
      }),
    );
    return { child, done, output: () => stdout };
  };
  const kubectlIn = async (input: string | undefined, args: string[]): Promise<string> => {
    const r = await start(args, input).done;
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  return {
    k,
    start,
    kubectl: (...args) => kubectlIn(undefined, args),
    kubectlIn: (input, ...args) => kubectlIn(input, args),
    async close() {
      for (const c of children) c.kill('SIGKILL');
      await k.close();
    },
  };
}
