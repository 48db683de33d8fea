/**
 * The emulator as a running thing: an HTTP server on loopback with a bearer token, a kubeconfig
 * written for it, and stop/start on the same port (keeping the state or starting afresh) so
 * tests can see clients survive an API server restart. Used by `shiftstack sim kube` and tests.
 */
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { KubeEmulator, type KubeEmulatorOptions } from './emulator.ts';
import { kubeconfigText, writeKubeconfig } from './kubeconfig.ts';
import { KubeHttp } from './server.ts';
import { selfSignedCert } from './tls.ts';

function isLoopbackName(h: string): boolean {
  return h === 'localhost' || h === '127.0.0.1' || h === '::1';
}

export interface StartKubeSimOptions extends KubeEmulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  /** HTTPS with a self-signed certificate (default), or plain HTTP (kubectl then sends no token). */
  tls?: boolean;
  /** Bearer token clients must send; random when absent. */
  token?: string;
  /** Where to write the kubeconfig; `.shiftstack/kube/kubeconfig` under the working directory by default. */
  kubeconfigPath?: string;
  log?: Logger;
}

export interface RunningKubeSim {
  url: string;
  token: string;
  /** PEM of the serving certificate, which is its own CA (HTTPS only). */
  caPem: string | undefined;
  /** Absolute, so a command printed with it works from any directory. */
  kubeconfigPath: string;
  /** The kubeconfig text (also written to kubeconfigPath). */
  kubeconfig: string;
  /** The emulator behind the server; replaced by `start({ keepState: false })`. */
  emulator: KubeEmulator;
  /** Stops serving: watches end, connections close, the port is free; state stays. */
  stop(): Promise<void>;
  /** Serves again on the same port; `keepState: false` starts an empty cluster. */
  start(opts?: { keepState?: boolean }): Promise<void>;
  restart(opts?: { keepState?: boolean }): Promise<void>;
  /** Stops and releases everything. */
  dispose(): Promise<void>;
}

/**
 * A fresh emulator after a restart without state continues resourceVersions well above the old
 * ones, so clients resuming from an old resourceVersion get 410 and relist instead of
 * silently missing changes.
 */
const RV_GAP_ON_RESET = 1000;

export async function startKubeSim(options: StartKubeSimOptions = {}): Promise<RunningKubeSim> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? randomBytes(24).toString('base64url');
  const cert =
    options.tls === false
      ? undefined
      : selfSignedCert(['localhost', '127.0.0.1', '::1', ...(isLoopbackName(host) ? [] : [host])]);
  let emulator = new KubeEmulator(options);
  let http: KubeHttp | undefined = new KubeHttp(emulator, { token });
  const url = await http.listen(options.port ?? 0, host, cert);
  const port = Number(new URL(url).port);
  const kubeconfigPath = resolve(options.kubeconfigPath ?? join('.shiftstack', 'kube', 'kubeconfig'));
  const kubeconfig = kubeconfigText({ server: url, token, ...(cert ? { caPem: cert.certPem } : {}) });
  await writeKubeconfig(kubeconfigPath, kubeconfig);

  const running: RunningKubeSim = {
    url,
    token,
    caPem: cert?.certPem,
    kubeconfigPath,
    kubeconfig,
    emulator,
    async stop() {
      const h = http;
      http = undefined;
      await h?.close();
    },
    async start(opts = {}) {
      if (http) return;
      if (opts.keepState === false) {
        const lastRv = emulator.store.currentRv();
        emulator.dispose();
        emulator = new KubeEmulator({ ...options, initialRv: lastRv + RV_GAP_ON_RESET });
        running.emulator = emulator;
      }
      const h = new KubeHttp(emulator, { token });
      await h.listen(port, host, cert);
      http = h;
    },
    async restart(opts = {}) {
      await running.stop();
      await running.start(opts);
    },
    async dispose() {
      await running.stop();
      emulator.dispose();
    },
  };
  return running;
}
