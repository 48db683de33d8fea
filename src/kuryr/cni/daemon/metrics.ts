/**
 * kuryr-daemon's metrics (its exporter on `[prometheus_exporter] cni_exporter_port`, 9655):
 * upstream's `kuryr_cni_request_duration_seconds{command, error}` with upstream's buckets (5 s to
 * 60 s: a request that waits for Neutron), and ours with sub-second buckets beside it, since a pool
 * hit wires a pod well under upstream's first bucket.
 */
import { histogram } from '../../../kube/metrics.ts';
import type { Histogram, Registry } from '../../../lib/metrics.ts';
import { gauge } from '../../../kube/metrics.ts';
import type { Gauge } from '../../../lib/metrics.ts';

/** Upstream's buckets (kuryr_kubernetes/cni/prometheus_exporter.py). */
export const UPSTREAM_CNI_BUCKETS = [5, 10, 15, 20, 25, 30, 40, 50, 60];
export const FINE_CNI_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 180];

export interface DaemonMetrics {
  /** Upstream's name and labels. */
  requestDuration: Histogram<'command' | 'error'>;
  /** Ours: the same observations in finer buckets. */
  requestDurationFine: Histogram<'command' | 'error'>;
  /** Requests being served or waiting for a worker. */
  inflight: Gauge<'state'>;
}

export function daemonMetrics(registry: Registry): DaemonMetrics {
  return {
    requestDuration: histogram(
      registry,
      'kuryr_cni_request_duration_seconds',
      'The duration of CNI requests',
      ['command', 'error'],
      UPSTREAM_CNI_BUCKETS,
    ),
    requestDurationFine: histogram(
      registry,
      'shiftstack_kuryr_cni_request_duration_seconds',
      'The duration of CNI requests served by kuryr-daemon, in buckets from 10 ms to 180 s',
      ['command', 'error'],
      FINE_CNI_BUCKETS,
    ),
    inflight: gauge(
      registry,
      'shiftstack_kuryr_cni_requests',
      'CNI requests in kuryr-daemon: running (holding a worker) or queued (waiting for one)',
      ['state'],
    ),
  };
}
