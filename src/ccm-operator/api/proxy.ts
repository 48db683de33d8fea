/**
 * config.openshift.io/v1 Proxy `cluster`: the cluster-wide proxy, and the ConfigMap of extra
 * trusted CAs (`spec.trustedCA`, in openshift-config, key `ca-bundle.crt`) the operator merges
 * into the CCM's trust bundle.
 */
import { array, type Infer, object, openObject, string } from '../../kube/crd/schema.ts';

export const proxySpec = openObject({
  httpProxy: string({ description: 'The proxy for HTTP requests.' }),
  httpsProxy: string({ description: 'The proxy for HTTPS requests.' }),
  noProxy: string({ description: 'Comma-separated hosts, domains and CIDRs that bypass the proxy.' }),
  readinessEndpoints: array(string()),
  trustedCA: object({
    name: string({
      description: 'A ConfigMap in openshift-config; its key ca-bundle.crt holds PEM certificates.',
    }),
  }).describe('Extra CA certificates to trust.'),
});
export type ProxySpec = Infer<typeof proxySpec>;

export const proxyStatus = openObject({
  httpProxy: string(),
  httpsProxy: string(),
  noProxy: string(),
});
export type ProxyStatus = Infer<typeof proxyStatus>;
