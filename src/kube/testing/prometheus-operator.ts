/**
 * Stand-ins of the Prometheus Operator's CRDs (monitoring.coreos.com/v1 ServiceMonitor and
 * PodMonitor): the kinds as the operator serves them (namespaced, plural, short names), with an open
 * schema, so our monitoring manifests apply to the Kubernetes emulator; what they say is checked
 * by the tests that apply them, against our Services and pods.
 */
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';

function crd(kind: string, plural: string, shortName: string): V1CustomResourceDefinition {
  // The wire's key (client-node's type spells it x_kubernetes_preserve_unknown_fields).
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.monitoring.coreos.com` },
    spec: {
      group: 'monitoring.coreos.com',
      scope: 'Namespaced',
      names: {
        kind,
        listKind: `${kind}List`,
        plural,
        singular: kind.toLowerCase(),
        shortNames: [shortName],
        categories: ['prometheus-operator'],
      },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
              required: ['spec'],
            },
          },
        },
      ],
    },
  } as unknown as V1CustomResourceDefinition;
}

export const PROMETHEUS_OPERATOR_CRDS: readonly V1CustomResourceDefinition[] = [
  crd('ServiceMonitor', 'servicemonitors', 'smon'),
  crd('PodMonitor', 'podmonitors', 'pmon'),
];
