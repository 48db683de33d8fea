/**
 * client-go's work queue metrics (`workqueue_*`, label `name`), on the process registry.
 */
import type { Registry } from '../../lib/metrics.ts';
import { counter, gauge, histogram, WORKQUEUE_BUCKETS } from '../metrics.ts';

export interface QueueMetrics {
  added(): void;
  depth(n: number): void;
  /** Seconds an item waited in the queue before a worker took it. */
  queued(seconds: number): void;
  /** Seconds a worker spent on an item. */
  worked(seconds: number): void;
  retried(): void;
}

export const noQueueMetrics: QueueMetrics = {
  added() {},
  depth() {},
  queued() {},
  worked() {},
  retried() {},
};

export function queueMetrics(registry: Registry, name: string): QueueMetrics {
  const labels = { name };
  const depth = gauge(registry, 'workqueue_depth', 'Current depth of workqueue', ['name']);
  const adds = counter(registry, 'workqueue_adds_total', 'Total number of adds handled by workqueue', [
    'name',
  ]);
  const latency = histogram(
    registry,
    'workqueue_queue_duration_seconds',
    'How long in seconds an item stays in workqueue before being requested.',
    ['name'],
    WORKQUEUE_BUCKETS,
  );
  const work = histogram(
    registry,
    'workqueue_work_duration_seconds',
    'How long in seconds processing an item from workqueue takes.',
    ['name'],
    WORKQUEUE_BUCKETS,
  );
  const retries = counter(
    registry,
    'workqueue_retries_total',
    'Total number of retries handled by workqueue',
    ['name'],
  );
  // Present from the start, as client-go's are, so dashboards see 0 rather than no series.
  depth.set(labels, 0);
  adds.inc(labels, 0);
  retries.inc(labels, 0);
  return {
    added: () => adds.inc(labels),
    depth: (n) => depth.set(labels, n),
    queued: (s) => latency.observe(labels, s),
    worked: (s) => work.observe(labels, s),
    retried: () => retries.inc(labels),
  };
}
