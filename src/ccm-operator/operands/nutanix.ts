/**
 * Nutanix's CCM as upstream's operator renders it: CCCMO `pkg/cloud/nutanix/assets/` (the
 * deployment of 0ef3c85e, the TLS profile that `nutanix.go` of 086159e0 passes to it, and the RBAC of
 * ecc46827/32643332 for the `kube-system/cloud-provider-nutanix` client): its JSON config from the
 * synced `cloud-conf`, the Prism credentials Secret named in the environment.
 */
import type { KubernetesObject, V1ClusterRole, V1Role } from '@kubernetes/client-node';
import {
  apiserverUrlCommand,
  ccmContainer,
  clusterBinding,
  cloudConfVolume,
  controlPlaneDeployment,
  HOST_ETC_KUBE,
  HTTPS_PORT,
  infrastructureNameEnv,
  namespacedBinding,
  tlsFlags,
  TRUSTED_CA,
} from './common.ts';
import { imageFor } from './images.ts';
import type { RenderInput } from './types.ts';

const NAME = 'nutanix-cloud-controller-manager';
/** The Secret the CredentialsRequest makes (manifests/…_18_credentialsrequest-nutanix.yaml). */
const CREDENTIALS_SECRET = 'nutanix-credentials';

export function renderNutanix(input: RenderInput): KubernetesObject[] {
  // Upstream passes only these two leader-election flags here: the framework's timings apply.
  const flags = [
    '--v=3',
    '--cloud-provider=nutanix',
    '--cloud-config=/etc/cloud/nutanix_config.json',
    '--controllers=*',
    '--cluster-name=$(OCP_INFRASTRUCTURE_NAME)',
    '--leader-elect=true',
    `--leader-elect-resource-namespace=${input.namespace}`,
    ...tlsFlags(input),
  ];
  const deployment = controlPlaneDeployment({
    name: NAME,
    platform: 'Nutanix',
    namespace: input.namespace,
    pod: {
      containers: [
        ccmContainer({
          image: imageFor(input, 'Nutanix', 'cloudControllerManagerNutanix'),
          env: [
            infrastructureNameEnv(input),
            { name: 'NUTANIX_SECRET_NAMESPACE', value: input.namespace },
            { name: 'NUTANIX_SECRET_NAME', value: CREDENTIALS_SECRET },
            { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
          ],
          resources: { requests: { cpu: '200m', memory: '128Mi' } },
          ports: [{ ...HTTPS_PORT }],
          command: apiserverUrlCommand('/bin/nutanix-cloud-controller-manager', flags),
          volumeMounts: [
            { name: 'nutanix-config', mountPath: '/etc/cloud', readOnly: true },
            HOST_ETC_KUBE.mount,
            TRUSTED_CA.mount,
          ],
        }),
      ],
      volumes: [
        cloudConfVolume('nutanix-config', 'nutanix_config.json'),
        TRUSTED_CA.volume,
        HOST_ETC_KUBE.volume,
      ],
    },
  });
  return [...rbac(input), deployment];
}

function rbac(input: RenderInput): KubernetesObject[] {
  const client = {
    kind: 'ServiceAccount' as const,
    name: 'cloud-provider-nutanix',
    namespace: 'kube-system',
  };
  const role: V1Role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: NAME, namespace: input.namespace },
    rules: [{ apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['get', 'list', 'watch'] }],
  };
  const clusterRole: V1ClusterRole = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: NAME },
    rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch', 'patch'] }],
  };
  return [
    role,
    namespacedBinding(`${NAME}:${NAME}`, input.namespace, NAME, [client]),
    clusterRole,
    clusterBinding({ name: `${NAME}:${NAME}` }, NAME, [client]),
  ];
}
