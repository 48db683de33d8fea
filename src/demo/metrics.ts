/**
 * Where the demo's controllers serve /metrics: each manager in this process listens on a free
 * loopback port (plain HTTP, no token: only this machine reaches it), and `shiftstack up` prints
 * the list. A manager's server starts with the manager, so the URLs are read once each listens.
 */
import type { Clock } from '../lib/clock.ts';
import type { Manager } from '../kube/index.ts';

/** A free loopback port for a metrics server. */
export const DEMO_METRICS = { host: '127.0.0.1', port: 0 } as const;

export interface MetricsEndpoint {
  /** The component, as the demo names it. */
  name: string;
  url: string;
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
