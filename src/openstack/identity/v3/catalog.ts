/**
 * `GET /v3/auth/catalog`: the catalog of the current token, for tokens issued without one
 * (`nocatalog`) or to re-read it. https://docs.openstack.org/api-ref/identity/v3/#get-service-catalog
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { CatalogService } from '../../core/keystone.ts';
import type { ServiceClient } from '../../core/service-client.ts';

export async function getCatalog(sc: ServiceClient, options: CallOptions = {}): Promise<CatalogService[]> {
  const res = await sc.request<{ catalog: CatalogService[] }>({
    method: 'GET',
    path: 'auth/catalog',
    label: 'catalog_get',
    signal: options.signal,
  });
  return res.body.catalog;
}
