/**
 * Metric helpers: get a metric from the registry if a sibling component already registered it,
 * otherwise create it. Two informers, queues or clients in one process share one registry and so
 * one `workqueue_depth`, told apart by labels; registering the name twice would throw.
 */
import { Counter, Gauge, Histogram, type Registry } from '../lib/metrics.ts';

export function counter<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
): Counter<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Counter<L>;
  return new Counter({ name, help, labelNames, registers: [registry] });
}

export function gauge<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
): Gauge<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Gauge<L>;
  return new Gauge({ name, help, labelNames, registers: [registry] });
}

export function histogram<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  buckets: number[],
): Histogram<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Histogram<L>;
  return new Histogram({ name, help, labelNames, buckets, registers: [registry] });
}

/** client-go's workqueue buckets: 1 µs to 10 s, ×10. */
export const WORKQUEUE_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10];
/** client-go's request latency buckets. */
export const REQUEST_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];
