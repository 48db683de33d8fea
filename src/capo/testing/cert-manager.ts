/**
 * cert-manager's Issuer and Certificate (cert-manager.io/v1) as bare CRDs: what a cluster with
 * cert-manager installed serves, so deploy/capo's certificate.yaml applies to the Kubernetes
 * emulator. Nothing issues certificates here; tests that need one make it (src/lib/tls-cert.ts).
 */
import {
  customResourceDefinition,
  defineKind,
  kubeObject,
  type CustomResourceDefinition,
} from '../../kube/crd/kind.ts';
import { anyObject } from '../../kube/crd/schema.ts';

const certManager = (kind: string, plural: string) =>
  defineKind({
    group: 'cert-manager.io',
    version: 'v1',
    kind,
    plural,
    scope: 'Namespaced',
    statusSubresource: true,
    schema: kubeObject({ description: `cert-manager's ${kind}.`, spec: anyObject(), status: anyObject() }),
  });

export function certManagerCrds(): CustomResourceDefinition[] {
  return [certManager('Issuer', 'issuers'), certManager('Certificate', 'certificates')].map((k) =>
    customResourceDefinition(k),
  );
}
