/** controller-runtime's per-controller metrics (`controller_runtime_*`, label `controller`). */
import type { Registry } from '../../lib/metrics.ts';
import { counter, gauge, histogram } from '../metrics.ts';

export type ReconcileOutcome = 'success' | 'error' | 'requeue_after';

export interface ControllerMetrics {
  reconciled(outcome: ReconcileOutcome, seconds: number): void;
  errored(terminal: boolean): void;
  activeWorkers(delta: number): void;
}

export const noControllerMetrics: ControllerMetrics = {
  reconciled() {},
  errored() {},
  activeWorkers() {},
};

const RECONCILE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60];

export function controllerMetrics(
  registry: Registry,
  controller: string,
  maxConcurrent: number,
): ControllerMetrics {
  const total = counter(
    registry,
    'controller_runtime_reconcile_total',
    'Total number of reconciliations per controller',
    ['controller', 'result'],
  );
  const errors = counter(
    registry,
    'controller_runtime_reconcile_errors_total',
    'Total number of reconciliation errors per controller',
    ['controller'],
  );
  const terminal = counter(
    registry,
    'controller_runtime_terminal_reconcile_errors_total',
    'Total number of terminal reconciliation errors per controller',
    ['controller'],
  );
  const time = histogram(
    registry,
    'controller_runtime_reconcile_time_seconds',
    'Length of time per reconciliation per controller',
    ['controller'],
    RECONCILE_BUCKETS,
  );
  const workers = gauge(
    registry,
    'controller_runtime_active_workers',
    'Number of currently used workers per controller',
    ['controller'],
  );
  gauge(
    registry,
    'controller_runtime_max_concurrent_reconciles',
    'Maximum number of concurrent reconciles per controller',
    ['controller'],
  ).set({ controller }, maxConcurrent);
  for (const result of ['success', 'error', 'requeue_after']) total.inc({ controller, result }, 0);
  errors.inc({ controller }, 0);
  terminal.inc({ controller }, 0);
  workers.set({ controller }, 0);
  return {
    reconciled: (result, seconds) => {
      total.inc({ controller, result });
      time.observe({ controller }, seconds);
    },
    errored: (isTerminal) => {
      errors.inc({ controller });
      if (isTerminal) terminal.inc({ controller });
    },
    activeWorkers: (delta) => workers.inc({ controller }, delta),
  };
}
