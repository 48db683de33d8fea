/** Reads the client's metrics in tests. */
import type { Registry } from '../../../lib/metrics.ts';

/** The value of `openstack_api_requests_total` (or another counter) for one `request` label. */
export async function requestCount(
  registry: Registry,
  label: string,
  metric = 'openstack_api_requests_total',
): Promise<number> {
  const m = registry.getSingleMetric(metric);
  if (!m) return 0;
  const data = await m.get();
  return data.values.filter((v) => v.labels.request === label).reduce((sum, v) => sum + v.value, 0);
}
