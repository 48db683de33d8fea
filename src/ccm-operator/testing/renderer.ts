/**
 * A small operand renderer for the operator's own tests, until the platform renderers
 * (src/ccm-operator/operands/) are merged: per platform a ClusterRole and its binding, and a
 * Deployment `<platform>-cloud-controller-manager` mounting cloud-conf and ccm-trusted-ca, plus a
 * ServiceAccount every platform shares. Same contract as `renderOperands`: a pure function of
 * RenderInput, objects in apply order, labelled with their platform or `shared`, and an error
 * when the platform's image is missing.
 */
import type { KubernetesObject } from '../../kube/index.ts';
import { CLOUD_CONF_NAME, TRUSTED_CA_NAME } from '../api/index.ts';
import { OPERAND_LABEL, SHARED_OPERAND } from '../operands/labels.ts';
import type { RenderedOperands, RenderInput } from '../operands/types.ts';

export const TEST_SERVICE_ACCOUNT = 'cloud-controller-manager';

/** The images.json key of each platform's CCM image (upstream's names; OpenStack's own is `shiftstack`). */
export function imageKey(input: RenderInput): string {
  if (input.platform === 'OpenStack' && input.openstackCcm === 'shiftstack') return 'shiftstack';
  return `cloudControllerManager${input.platform}`;
}

export function testRenderer(input: RenderInput): RenderedOperands {
  const image = input.images[imageKey(input)];
  if (!image) throw new Error(`images.json has no image ${imageKey(input)}`);
  const p = input.platform.toLowerCase();
  const name = `${p}-cloud-controller-manager`;
  const ns = input.namespace;
  const label = (owner: string) => ({ [OPERAND_LABEL]: owner });
  const objects: KubernetesObject[] = [
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: TEST_SERVICE_ACCOUNT, namespace: ns, labels: label(SHARED_OPERAND) },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name, labels: label(input.platform) },
      rules: [{ apiGroups: [''], resources: ['nodes', 'services'], verbs: ['get', 'list', 'watch'] }],
    } as KubernetesObject,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name, labels: label(input.platform) },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name: TEST_SERVICE_ACCOUNT, namespace: ns }],
    } as KubernetesObject,
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: ns, labels: label(input.platform) },
      spec: {
        replicas: input.singleReplica ? 1 : 2,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: {
            serviceAccountName: TEST_SERVICE_ACCOUNT,
            containers: [
              {
                name: 'cloud-controller-manager',
                image,
                args: [`--cluster-name=${input.infrastructureName}`, '--cloud-config=/etc/cloud/cloud.conf'],
                volumeMounts: [
                  { name: 'config', mountPath: '/etc/cloud' },
                  { name: 'trusted-ca', mountPath: '/etc/pki/ca-trust/extracted/pem' },
                ],
              },
            ],
            volumes: [
              { name: 'config', configMap: { name: CLOUD_CONF_NAME } },
              { name: 'trusted-ca', configMap: { name: TRUSTED_CA_NAME } },
            ],
          },
        },
      },
    } as KubernetesObject,
  ];
  return { objects };
}
