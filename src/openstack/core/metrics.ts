/**
 * The OpenStack API metrics of cloud-provider-openstack (OCCM `pkg/metrics`), same names, same
 * `request` label (`<resource>_<verb>`, e.g. `loadbalancer_create`), so its dashboards and alerts work
 * unchanged. Registered on the registry passed in, never prom-client's global one; a second client
 * on the same registry reuses the metrics already there.
 */
import { Counter, Histogram, type Registry } from '../../lib/metrics.ts';

export interface ApiMetrics {
  /** `openstack_api_request_duration_seconds`: one observation per call, retries included. */
  duration: Histogram<'request'>;
  /** `openstack_api_requests_total` */
  total: Counter<'request'>;
  /** `openstack_api_request_errors_total`: calls that threw or ended with a status ≥ 400. */
  errors: Counter<'request'>;
  /** `openstack_api_request_retries_total`: extra attempts (shiftstack's, not in OCCM). */
  retries: Counter<'request'>;
}

export function apiMetrics(registry: Registry): ApiMetrics {
  return {
    duration: reuse(
      registry,
      'openstack_api_request_duration_seconds',
      () =>
        new Histogram({
          name: 'openstack_api_request_duration_seconds',
          help: 'Latency of an OpenStack API call',
          labelNames: ['request'],
          registers: [registry],
        }),
    ),
    total: counter(registry, 'openstack_api_requests_total', 'Total number of OpenStack API calls'),
    errors: counter(
      registry,
      'openstack_api_request_errors_total',
      'Total number of errors for an OpenStack API call',
    ),
    retries: counter(
      registry,
      'openstack_api_request_retries_total',
      'Total number of OpenStack API attempts repeated after a 429, 503, 5xx or connection failure',
    ),
  };
}

function counter(registry: Registry, name: string, help: string): Counter<'request'> {
  return reuse(
    registry,
    name,
    () => new Counter({ name, help, labelNames: ['request'], registers: [registry] }),
  );
}

function reuse<M>(registry: Registry, name: string, create: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? create();
}
