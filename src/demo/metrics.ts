/**
 * Where the demo's controllers serve /metrics, as `shiftstack up` prints them:
 *
 * - each manager in this process (capo, mapo, ccm-operator, the in-tree provider's stand-in, the
 *   demo's own, and the kuryr controller once the scenario starts it) listens on a free loopback
 *   port: plain HTTP, no token, only this machine reaches it. A manager's server starts with the
 *   manager, so the URLs are read once each listens;
 * - the ccm the operator deploys runs as pods of the workload runner (src/demo/workloads): its
 *   secure port, HTTPS with delegated auth as upstream's, is on the host port the runner gave the
 *   pod's container port (ports.ts). A scrape there needs a bearer token the API server
 *   authorizes for `/metrics`: the kubeconfig's admin token is one.
 */
import type { Clock } from '../lib/clock.ts';
import type { Manager } from '../kube/index.ts';
import type { PodView } from './workloads/runner.ts';

/** A free loopback port for a metrics server. */
export const DEMO_METRICS = { host: '127.0.0.1', port: 0 } as const;

export interface MetricsEndpoint {
  /** The component, as the demo names it. */
  name: string;
  url: string;
  /** The URL asks for a bearer token (a component's secure port). */
  token?: boolean;
}

/**
 * The /metrics URL of each manager once its server listens; a manager still without one after
 * `timeoutMs` (it failed to start: `Controllers.failed` says why) is left out.
 */
export async function metricsEndpoints(
  managers: readonly { name: string; manager: Manager }[],
  clock: Clock,
  signal: AbortSignal,
  timeoutMs = 10_000,
): Promise<MetricsEndpoint[]> {
  const deadline = clock.now() + timeoutMs;
  let delayMs = 10;
  while (managers.some((m) => m.manager.metricsUrl === undefined) && clock.now() < deadline) {
    await clock.sleep(delayMs, signal);
    delayMs = Math.min(delayMs * 2, 200);
  }
  return managers.flatMap(({ name, manager }) =>
    manager.metricsUrl === undefined ? [] : [{ name, url: new URL('/metrics', manager.metricsUrl).href }],
  );
}

/** A workload whose pods serve /metrics on a container port. */
export interface MetricsWorkload {
  /** The component, as the demo names it. */
  name: string;
  pods: () => readonly PodView[];
  containerPort: number;
  scheme: 'http' | 'https';
  /** The port authenticates and authorizes each scrape (delegated auth). */
  token: boolean;
}

/** One URL per running pod of each workload (none before its pods start, nor while one stops). */
export function workloadMetricsEndpoints(workloads: readonly MetricsWorkload[]): MetricsEndpoint[] {
  return workloads.flatMap((w) =>
    w.pods().flatMap((pod) => {
      const port = pod.hostPorts.get(w.containerPort);
      if (port === undefined || pod.stopping || pod.pids.length === 0) return [];
      return [
        {
          name: `${w.name} (pod ${pod.name})`,
          url: `${w.scheme}://127.0.0.1:${port}/metrics`,
          ...(w.token ? { token: true } : {}),
        },
      ];
    }),
  );
}

/** How to scrape a token-guarded URL from a shell: the kubeconfig's own token, as a bearer. */
export function tokenHint(kubeconfig: string): string {
  return (
    `curl -sk -H "Authorization: Bearer $(kubectl --kubeconfig ${kubeconfig} config view --raw ` +
    `-o jsonpath='{.users[0].user.token}')" <URL>`
  );
}
