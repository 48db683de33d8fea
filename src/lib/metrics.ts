import { Registry, collectDefaultMetrics } from 'prom-client';

export { Counter, Gauge, Histogram, Registry, Summary } from 'prom-client';

/**
 * One registry per process (or per test), passed to every component that records metrics.
 * We never use prom-client's global registry: two managers in one test process must not
 * share counters, and a metric registered twice on the global registry throws.
 */
export function createRegistry(options: { defaultMetrics?: boolean; prefix?: string } = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) {
    collectDefaultMetrics({ register: registry, ...(options.prefix ? { prefix: options.prefix } : {}) });
  }
  return registry;
}
