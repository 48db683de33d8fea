/**
 * The real kubectl run once against a cluster's kubeconfig, with a HOME and cache of the test's
 * own (test/kubectl/kubectl.ts is the fixture of the kubectl suites, with an emulator of its own).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';

/** Why kubectl cannot run here (a reason to skip), or undefined; in CI a missing kubectl is an error. */
export function noKubectl(): string | undefined {
  const missing = existsSync(KUBECTL) ? undefined : `no kubectl at ${KUBECTL} (set KUBECTL to its path)`;
  if (missing && process.env.CI) throw new Error(`KUBECTL TEST CANNOT RUN: ${missing}`);
  return missing;
}

export interface KubectlRun {
  code: number | null;
  out: string;
  err: string;
}

/** Runs `kubectl args…` with KUBECONFIG = `kubeconfig` and HOME = `home`. */
export function kubectl(args: string[], kubeconfig: string, home: string): Promise<KubectlRun> {
  return new Promise((resolve) => {
    const child = spawn(KUBECTL, ['--cache-dir', join(home, 'cache'), ...args], {
      env: { ...process.env, KUBECONFIG: kubeconfig, HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => resolve({ code, out, err }));
  });
}
