/**
 * OCCM's reconcile metrics (`pkg/metrics/metrics_reconcile.go`): same names, same `operation`
 * label, same histogram buckets, so dashboards and the documented `OpenStackReconcileFailed` alert
 * work unchanged. The OpenStack API metrics (`openstack_api_*`) live with the client in
 * src/openstack/core/metrics.ts.
 */
import { Counter, Histogram, type Registry } from '../lib/metrics.ts';

/** The `operation` label values OCCM emits. */
export const ReconcileOperation = {
  Ensure: 'loadbalancer_ensure',
  Update: 'loadbalancer_update',
  Delete: 'loadbalancer_delete',
} as const;

export type ReconcileOperationName = (typeof ReconcileOperation)[keyof typeof ReconcileOperation];

export const RECONCILE_DURATION_BUCKETS: readonly number[] = [
  0.01, 0.05, 0.1, 0.5, 1.0, 2.5, 5.0, 7.5, 10.0, 12.5, 15.0, 17.5, 20.0, 22.5, 25.0, 27.5, 30.0, 50.0, 75.0,
  100.0, 1000.0,
];

export interface ReconcileMetrics {
  /** `cloudprovider_openstack_reconcile_duration_seconds` */
  duration: Histogram<'operation'>;
  /** `cloudprovider_openstack_reconcile_total` */
  total: Counter<'operation'>;
  /** `cloudprovider_openstack_reconcile_errors_total` */
  errors: Counter<'operation'>;
}

/** Registers the metrics on `registry`, or returns the ones already there (two managers, one registry). */
export function reconcileMetrics(registry: Registry): ReconcileMetrics {
  return {
    duration: reuse(
      registry,
      'cloudprovider_openstack_reconcile_duration_seconds',
      (name) =>
        new Histogram({
          name,
          help: 'Time taken by various parts of OpenStack cloud controller manager reconciliation loops',
          labelNames: ['operation'],
          buckets: [...RECONCILE_DURATION_BUCKETS],
          registers: [registry],
        }),
    ),
    total: reuse(
      registry,
      'cloudprovider_openstack_reconcile_total',
      (name) =>
        new Counter({
          name,
          help: 'Total number of OpenStack cloud controller manager reconciliations',
          labelNames: ['operation'],
          registers: [registry],
        }),
    ),
    errors: reuse(
      registry,
      'cloudprovider_openstack_reconcile_errors_total',
      (name) =>
        new Counter({
          name,
          help: 'Total number of OpenStack cloud controller manager reconciliation errors',
          labelNames: ['operation'],
          registers: [registry],
        }),
    ),
  };
}

/**
 * Times one reconcile the way OCCM's MetricContext.ObserveReconcile does: the duration and the total
 * always, the error counter when `run` throws (the error is rethrown).
 */
export async function observeReconcile<T>(
  metrics: ReconcileMetrics,
  operation: ReconcileOperationName,
  run: () => Promise<T>,
): Promise<T> {
  const end = metrics.duration.startTimer({ operation });
  try {
    return await run();
  } catch (err) {
    metrics.errors.inc({ operation });
    throw err;
  } finally {
    end();
    metrics.total.inc({ operation });
  }
}

function reuse<M>(registry: Registry, name: string, create: (name: string) => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? create(name);
}
