/**
 * What upstream's controller exporter (KURYR `controller/managers/prometheus_exporter.py`) computes
 * when it is scraped, beside the metrics the controllers record as they go (src/kuryr/metrics.ts):
 * `kuryr_quota_free_count{resource}`, the Neutron quota left in kuryr's project for the resources
 * pods, namespaces and policies consume — what runs out first when a burst of pods hits a cluster.
 * One `GET /v2.0/quotas/{project}/details.json` per scrape, bounded in time; a failed read leaves
 * the last values and is logged, so a scrape never fails on the cloud.
 */
import type { Logger } from '../lib/log.ts';
import { Gauge, type Registry } from '../lib/metrics.ts';
import type { QuotaUsage } from '../openstack/network/v2/quotas.ts';

/** Upstream's label values, by Neutron's quota key. */
export const QUOTA_RESOURCES: Readonly<Record<string, string>> = {
  port: 'ports',
  subnet: 'subnets',
  network: 'networks',
  security_group: 'security_groups',
  security_group_rule: 'security_group_rules',
};

/** Neutron's "no limit". */
const NO_LIMIT = -1;

export interface QuotaReader {
  network: {
    quotas: {
      getDetails(projectId: string, o?: { signal?: AbortSignal }): Promise<Record<string, QuotaUsage>>;
    };
  };
}

export function registerQuotaMetrics(
  registry: Registry,
  os: QuotaReader,
  projectId: string,
  log: Logger,
  timeoutMs = 10_000,
): Gauge {
  return new Gauge({
    name: 'kuryr_quota_free_count',
    help: 'Amount of quota available for the network resource',
    labelNames: ['resource'],
    registers: [registry],
    async collect() {
      let quota: Record<string, QuotaUsage>;
      try {
        quota = await os.network.quotas.getDetails(projectId, { signal: AbortSignal.timeout(timeoutMs) });
      } catch (err) {
        log.warn({ err, project: projectId }, 'kuryr_quota_free_count: the Neutron quota could not be read');
        return;
      }
      for (const [key, resource] of Object.entries(QUOTA_RESOURCES)) {
        const q = quota[key];
        if (!q) continue;
        if (q.limit === NO_LIMIT) this.set({ resource }, NO_LIMIT);
        else if (q.limit - q.used >= 0) this.set({ resource }, q.limit - q.used);
      }
    },
  });
}
