/**
 * Kuryr's metrics under upstream's names (`controller/managers/prometheus_exporter.py`), so its
 * dashboards keep working; each helper adds its metrics in a block of its own below.
 */
import { Counter, Histogram, type Registry } from '../lib/metrics.ts';

// ---------------------------------------------------------------- pods, VIFs and port pools (kuryr-pods)

/**
 * Upstream's buckets (10 s to 120 s by 10 s: pods waited tens of seconds on Neutron there), with
 * finer ones of ours below 10 s, where a pool hit lands; upstream's bucket bounds are all kept.
 */
export const POD_CREATION_LATENCY_BUCKETS: readonly number[] = [
  0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120,
];

export interface PodMetrics {
  /** `kuryr_pod_creation_latency`: pod created → its KuryrPort's VIF active, in seconds. */
  podCreationLatency: Histogram;
  /** `kuryr_port_readiness`: a port not ACTIVE within upstream's 90 s. */
  portReadiness: Counter;
}

/** Registers the metrics on `registry`, or returns those already there (two managers, one registry). */
export function podMetrics(registry: Registry): PodMetrics {
  return {
    podCreationLatency:
      (registry.getSingleMetric('kuryr_pod_creation_latency') as Histogram | undefined) ??
      new Histogram({
        name: 'kuryr_pod_creation_latency',
        help: 'Time taken for a pod to have Kuryr annotations set',
        buckets: [...POD_CREATION_LATENCY_BUCKETS],
        registers: [registry],
      }),
    portReadiness:
      (registry.getSingleMetric('kuryr_port_readiness') as Counter | undefined) ??
      new Counter({
        name: 'kuryr_port_readiness',
        help: 'This counter is increased when Kuryr times out waiting for Neutron to move port to ACTIVE',
        registers: [registry],
      }),
  };
}
