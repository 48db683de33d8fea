/**
 * How the API server reaches `shiftstack capo`'s conversion webhook, and what it converts. In a
 * cluster (deploy/capo, CAPO's config/ shapes): the Service `capo-system/capo-webhook-service`
 * port 443 path `/convert` in front of the pods' `--webhook-port` 9443, its CA bundle injected into
 * the CRDs by cert-manager from the Certificate `capo-system/capo-serving-cert`. Outside (tests, the
 * demo): a URL on loopback with the served certificate as CA bundle.
 */
import type { CrdConversion, WebhookClientConfig } from '../../kube/crd/kind.ts';
import type { KindConversion } from '../../kube/conversion/types.ts';
import { CLUSTER_API_CONVERSIONS } from './capi-conversion.ts';
import { CAPO_CONVERSIONS } from './conversion/index.ts';

export const WEBHOOK_NAMESPACE = 'capo-system';
export const WEBHOOK_SERVICE = 'capo-webhook-service';
/** The Certificate cert-manager issues for the Service; its Secret is mounted at --webhook-cert-dir. */
export const SERVING_CERT = 'capo-serving-cert';
export const SERVING_CERT_SECRET = 'capo-webhook-service-cert';
/** cert-manager's CA injector copies the Certificate's CA into every CRD carrying this annotation. */
export const INJECT_CA_ANNOTATION = 'cert-manager.io/inject-ca-from';

/** The CRDs' clientConfig in a cluster: the webhook Service (caBundle injected by cert-manager). */
export const IN_CLUSTER_CLIENT_CONFIG: WebhookClientConfig = {
  service: { namespace: WEBHOOK_NAMESPACE, name: WEBHOOK_SERVICE, path: '/convert', port: 443 },
};

/** A multi-version CRD's `spec.conversion`: the webhook at `clientConfig`. */
export function webhookConversion(clientConfig: WebhookClientConfig): CrdConversion {
  return {
    strategy: 'Webhook',
    webhook: { conversionReviewVersions: ['v1', 'v1beta1'], clientConfig: { ...clientConfig } },
  };
}

/**
 * The kinds `shiftstack capo`'s webhook converts: CAPO's, and the Cluster API stand-ins' where it
 * acts as Cluster API core (elsewhere Cluster API's own webhook converts Cluster and Machine).
 */
export function capoConversions(opts: { clusterAPI: boolean }): KindConversion[] {
  return [...CAPO_CONVERSIONS, ...(opts.clusterAPI ? CLUSTER_API_CONVERSIONS : [])];
}
