/**
 * Neutron quotas of a project: the limits, or limits with usage. A member may read their own
 * project's; other projects need an admin. https://docs.openstack.org/api-ref/network/v2/#quotas-extension-quotas
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';

/** Limits per resource (`network`, `port`, `floatingip`, `security_group`, `trunk`, …); -1 is unlimited. */
export type Quota = Record<string, number>;

export interface QuotaUsage {
  limit: number;
  used: number;
  reserved: number;
}

/** `GET /v2.0/quotas/{project_id}`. */
export async function getQuota(
  sc: ServiceClient,
  projectId: string,
  options: CallOptions = {},
): Promise<Quota> {
  const res = await sc.request<{ quota: Quota }>({
    method: 'GET',
    path: `quotas/${encodeURIComponent(projectId)}`,
    label: 'network_quota_get',
    signal: options.signal,
  });
  return res.body.quota;
}

/** `GET /v2.0/quotas/{project_id}/details.json`: limit, used and reserved per resource. */
export async function getQuotaDetails(
  sc: ServiceClient,
  projectId: string,
  options: CallOptions = {},
): Promise<Record<string, QuotaUsage>> {
  const res = await sc.request<{ quota: Record<string, QuotaUsage> }>({
    method: 'GET',
    // The api-ref documents the path with its `.json` suffix; Zed answers both spellings.
    path: `quotas/${encodeURIComponent(projectId)}/details.json`,
    label: 'network_quota_get',
    signal: options.signal,
  });
  return res.body.quota;
}
