/**
 * vSphere's CCM as upstream's operator renders it: CCCMO `pkg/cloud/vsphere/assets/` (140583ca:
 * the credentials Secret named in the environment, the feature gates, dual stack) and its RBAC
 * for the `kube-system/vsphere-cloud-controller-manager` client (fdbb83b0): read the vCenter
 * credentials in the operands' namespace, update Nodes, and the common roles.
 */
import type { KubernetesObject, V1ClusterRole, V1Role } from '@kubernetes/client-node';
import {
  apiserverUrlCommand,
  CCM_SERVICE_ACCOUNT,
  ccmContainer,
  clusterBinding,
  cloudConfVolume,
  controlPlaneDeployment,
  featureGatesValue,
  HOST_ETC_KUBE,
  HTTPS_PORT,
  infrastructureNameEnv,
  leaderElectionFlags,
  namespacedBinding,
  TRUSTED_CA,
} from './common.ts';
import { imageFor } from './images.ts';
import type { RenderInput } from './types.ts';

const NAME = 'vsphere-cloud-controller-manager';
/** The Secret the CredentialsRequest makes (manifests/…_17_credentialsrequest-vsphere.yaml). */
const CREDENTIALS_SECRET = 'vsphere-cloud-credentials';

export function renderVSphere(input: RenderInput): KubernetesObject[] {
  const flags = [
    '--v=3',
    '--cloud-config=$(CLOUD_CONFIG)',
    '--cloud-provider=vsphere',
    '--controllers=*',
    '--configure-cloud-routes=false',
    '--bind-address=127.0.0.1',
    '--cluster-name=$(OCP_INFRASTRUCTURE_NAME)',
    ...leaderElectionFlags(input.namespace),
    `--feature-gates=${featureGatesValue(input)}`,
    '--use-service-account-credentials=true',
  ];
  const deployment = controlPlaneDeployment({
    name: NAME,
    platform: 'VSphere',
    namespace: input.namespace,
    pod: {
      containers: [
        ccmContainer({
          image: imageFor(input, 'VSphere', 'cloudControllerManagerVSphere'),
          env: [
            { name: 'CLOUD_CONFIG', value: '/etc/kubernetes-cloud-config/cloud.conf' },
            infrastructureNameEnv(input),
            { name: 'VSPHERE_SECRET_NAMESPACE', value: input.namespace },
            { name: 'VSPHERE_SECRET_NAME', value: CREDENTIALS_SECRET },
            { name: 'ENABLE_ALPHA_DUAL_STACK', value: 'true' },
          ],
          resources: { requests: { cpu: '200m', memory: '128Mi' } },
          ports: [{ ...HTTPS_PORT }],
          command: apiserverUrlCommand('/bin/vsphere-cloud-controller-manager', flags),
          volumeMounts: [
            HOST_ETC_KUBE.mount,
            { name: 'config-vccm', mountPath: '/etc/kubernetes-cloud-config', readOnly: true },
            TRUSTED_CA.mount,
          ],
        }),
      ],
      volumes: [
        cloudConfVolume('config-vccm'),
        // Declared, not mounted: the CCM reads the Secret through the API (VSPHERE_SECRET_NAME).
        { name: 'secret-vccm', secret: { secretName: CREDENTIALS_SECRET, optional: true } },
        TRUSTED_CA.volume,
        HOST_ETC_KUBE.volume,
      ],
    },
  });
  return [...rbac(input), deployment];
}

function rbac(input: RenderInput): KubernetesObject[] {
  const client = { kind: 'ServiceAccount' as const, name: NAME, namespace: 'kube-system' };
  const role: V1Role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: NAME, namespace: input.namespace },
    // The vCenter credentials.
    rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }],
  };
  // vSphere's node manager runs on the same client.
  const clusterRole: V1ClusterRole = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: NAME },
    rules: [
      { apiGroups: [''], resources: ['nodes'], verbs: ['update'] },
      { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] },
    ],
  };
  return [
    role,
    namespacedBinding(`${NAME}:${NAME}`, input.namespace, NAME, [client]),
    namespacedBinding(`${NAME}:${CCM_SERVICE_ACCOUNT}`, input.namespace, CCM_SERVICE_ACCOUNT, [client]),
    clusterRole,
    clusterBinding({ name: `${NAME}:${NAME}` }, NAME, [client]),
    clusterBinding({ name: `${NAME}:${CCM_SERVICE_ACCOUNT}` }, CCM_SERVICE_ACCOUNT, [client]),
  ];
}
