/**
 * GCP's CCM as upstream's operator renders it: CCCMO `pkg/cloud/gcp/assets/` (086159e0, the
 * newest found: the TLS profile, `--secure-port=0`, ten service workers, no node IPAM), its RBAC
 * for the `kube-system/cloud-provider` client, and the ValidatingAdmissionPolicy that holds the
 * `cloud.google.com/network-tier` annotation to Standard or Premium.
 */
import type {
  KubernetesObject,
  V1ClusterRole,
  V1ValidatingAdmissionPolicy,
  V1ValidatingAdmissionPolicyBinding,
} from '@kubernetes/client-node';
import {
  apiserverUrlCommand,
  ccmContainer,
  clusterBinding,
  cloudConfVolume,
  controlPlaneDeployment,
  HOST_ETC_KUBE,
  HTTPS_PORT,
  infrastructureNameEnv,
  leaderElectionFlags,
  tlsFlags,
  TRUSTED_CA,
} from './common.ts';
import { imageFor } from './images.ts';
import type { RenderInput } from './types.ts';

export function renderGcp(input: RenderInput): KubernetesObject[] {
  const flags = [
    '--v=3',
    '--cloud-config=$(CLOUD_CONFIG)',
    '--cloud-provider=gce',
    '--concurrent-service-syncs=10',
    '--controllers=*,-nodeipam',
    '--configure-cloud-routes=false',
    '--use-service-account-credentials=true',
    '--bind-address=127.0.0.1',
    '--cluster-name=$(OCP_INFRASTRUCTURE_NAME)',
    ...leaderElectionFlags(input.namespace),
    ...tlsFlags(input),
    '--secure-port=0',
  ];
  const deployment = controlPlaneDeployment({
    name: 'gcp-cloud-controller-manager',
    platform: 'GCP',
    namespace: input.namespace,
    pod: {
      containers: [
        ccmContainer({
          image: imageFor(input, 'GCP', 'cloudControllerManagerGCP'),
          env: [
            { name: 'CLOUD_CONFIG', value: '/etc/kubernetes-cloud-config/cloud.conf' },
            infrastructureNameEnv(input),
            { name: 'GOOGLE_APPLICATION_CREDENTIALS', value: '/etc/cloud-sa/service_account.json' },
          ],
          resources: { requests: { cpu: '200m', memory: '128Mi' } },
          ports: [{ ...HTTPS_PORT }],
          command: apiserverUrlCommand('/bin/gcp-cloud-controller-manager', flags),
          terminationMessagePolicy: 'FallbackToLogsOnError',
          volumeMounts: [
            HOST_ETC_KUBE.mount,
            { name: 'config-gccm', mountPath: '/etc/kubernetes-cloud-config', readOnly: true },
            { name: 'cloud-sa-volume', mountPath: '/etc/cloud-sa', readOnly: true },
            TRUSTED_CA.mount,
          ],
        }),
      ],
      volumes: [
        cloudConfVolume('config-gccm'),
        HOST_ETC_KUBE.volume,
        { name: 'cloud-sa-volume', secret: { secretName: 'gcp-ccm-cloud-credentials' } },
        TRUSTED_CA.volume,
      ],
    },
  });
  return [...rbac(), ...networkTierPolicy(), deployment];
}

/** The client the CCM takes as `kube-system/cloud-provider` writes Events and Service status. */
function rbac(): KubernetesObject[] {
  const role: V1ClusterRole = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'gcp-cloud-controller-manager' },
    rules: [
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch', 'update'] },
      { apiGroups: [''], resources: ['services/status'], verbs: ['patch', 'update'] },
    ],
  };
  const binding = clusterBinding(
    { name: 'gcp-cloud-controller-manager:cloud-provider' },
    role.metadata!.name!,
    [{ kind: 'ServiceAccount', name: 'cloud-provider', namespace: 'kube-system' }],
  );
  return [role, binding];
}

function networkTierPolicy(): KubernetesObject[] {
  const tier = 'cloud.google.com/network-tier';
  const name = 'network-tier-annotation-validation-policy';
  const policy: V1ValidatingAdmissionPolicy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['services'] },
        ],
      },
      variables: [
        {
          name: 'hasNetworkTier',
          expression: `has(object.metadata.annotations) && '${tier}' in object.metadata.annotations`,
        },
        { name: 'networkTierValue', expression: `object.metadata.?annotations['${tier}'].orValue("")` },
        {
          name: 'hasOldNetworkTier',
          expression: `oldObject != null && oldObject.metadata.?annotations != null && '${tier}' in oldObject.metadata.annotations`,
        },
        { name: 'oldNetworkTierValue', expression: `oldObject.metadata.?annotations['${tier}'].orValue("")` },
        {
          name: 'valueHasChanged',
          expression:
            'variables.hasNetworkTier && (!variables.hasOldNetworkTier || variables.oldNetworkTierValue != variables.networkTierValue)',
        },
      ],
      validations: [
        {
          expression: "!variables.valueHasChanged || variables.networkTierValue in ['Standard', 'Premium']",
          message: `The annotation '${tier}', if specified, must be either 'Standard' or 'Premium'.`,
        },
      ],
    },
  };
  const binding: V1ValidatingAdmissionPolicyBinding = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: 'network-tier-annotation-binding' },
    spec: { policyName: name, validationActions: ['Deny'] },
  };
  return [policy, binding];
}
