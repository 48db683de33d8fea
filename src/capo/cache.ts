/**
 * What capo never caches: Secrets and ConfigMaps, as upstream CAPO disables its cache for them
 * (`client.CacheOptions.DisableFor`). Identity and bootstrap-data Secrets are read from the API
 * server when a reconcile needs them, so no credential or bootstrap data stays in the process, and
 * no Secret of the cluster is listed or watched whole. The OpenStackServer controller watches
 * Secrets as metadata only, to go on as soon as a bootstrap Secret appears.
 *
 * What is cached is cached without managedFields: no capo controller reads them, and at a thousand
 * machines they were a third of each cached object and of the work to take in every watch event.
 */
import {
  keyString,
  kinds,
  metadataOnly,
  type InformerDefaults,
  type Manager,
  type ObjectKey,
  type ResourceType,
} from '../kube/index.ts';

export const CAPO_UNCACHED_KINDS: readonly ResourceType[] = [kinds.Secret, kinds.ConfigMap];

export const CAPO_INFORMERS: InformerDefaults = { stripManagedFields: true };

/**
 * The resourceVersion of each Secret from the manager's metadata-only Secret informer (the one the
 * OpenStackServer controller watches bootstrap Secrets with: names and versions, never contents),
 * for the ScopeCache's `secretVersion`: an identity Secret is read again only once it changed.
 */
export function secretVersions(mgr: Manager): (key: ObjectKey) => string | undefined {
  const secrets = mgr.informers.informerFor(metadataOnly(kinds.Secret));
  return (key) => secrets.get(keyString(key))?.metadata?.resourceVersion;
}
