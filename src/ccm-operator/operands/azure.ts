/**
 * Azure's CCM and its node manager as upstream's operator renders them: CCCMO
 * `pkg/cloud/azure/assets/` (12aefca5: the credentials injector as an init container, workload
 * identity, the bound ServiceAccount token, `--controllers=*,-cloud-node` because the
 * `azure-cloud-node-manager` DaemonSet initializes Nodes instead), the Azure RBAC and the two
 * ValidatingAdmissionPolicies `azure.go` lists (node updates only from the node manager on the same
 * node; the TCP idle-timeout annotation within 4…100).
 *
 * The init container runs `/azure-config-credentials-injector` from the operator's image
 * (`cloudControllerManagerOperator`): it merges the Secret `azure-cloud-credentials` into the
 * cloud config, in an emptyDir the CCM and the node manager read.
 */
import type {
  KubernetesObject,
  V1ClusterRole,
  V1Container,
  V1DaemonSet,
  V1EnvVar,
  V1Role,
  V1ValidatingAdmissionPolicy,
  V1ValidatingAdmissionPolicyBinding,
  V1Volume,
} from '@kubernetes/client-node';
import {
  apiserverUrlCommand,
  CCM_SERVICE_ACCOUNT,
  ccmContainer,
  clusterBinding,
  cloudConfVolume,
  CNM_PORT,
  CNM_SERVICE_ACCOUNT,
  controlPlaneDeployment,
  HOST_ETC_KUBE,
  HTTPS_PORT,
  infrastructureNameEnv,
  leaderElectionFlags,
  namespacedBinding,
  TRUSTED_CA,
  workloadAnnotation,
} from './common.ts';
import { imageFor } from './images.ts';
import { CNM_PROVIDER_LABEL } from './labels.ts';
import type { RenderInput } from './types.ts';

const CREDENTIALS_SECRET = 'azure-cloud-credentials';

export function renderAzure(input: RenderInput): KubernetesObject[] {
  return [...rbac(input), ...policies(input), controllerManager(input), nodeManager(input)];
}

function credentialsInjector(input: RenderInput): V1Container {
  const fromSecret = (name: string, key: string, optional: boolean): V1EnvVar => ({
    name,
    valueFrom: { secretKeyRef: { name: CREDENTIALS_SECRET, key, ...(optional ? { optional } : {}) } },
  });
  return {
    name: 'azure-inject-credentials',
    image: imageFor(input, 'Azure', 'cloudControllerManagerOperator'),
    command: [
      '/bin/bash',
      '-c',
      [
        '#!/bin/bash',
        'if [[ -f /etc/cloud-config/apiserver-url.env ]]; then',
        '  cp /etc/cloud-config/apiserver-url.env /etc/merged-cloud-config/',
        'fi',
        'exec /azure-config-credentials-injector \\',
        '  --cloud-config-file-path=/etc/cloud-config/cloud.conf \\',
        '  --output-file-path=/etc/merged-cloud-config/cloud.conf \\',
        '  --disable-identity-extension-auth \\',
        '  --enable-azure-workload-identity=true',
        '',
      ].join('\n'),
    ],
    env: [
      fromSecret('AZURE_CLIENT_ID', 'azure_client_id', false),
      fromSecret('AZURE_CLIENT_SECRET', 'azure_client_secret', true),
      fromSecret('AZURE_TENANT_ID', 'azure_tenant_id', true),
      fromSecret('AZURE_FEDERATED_TOKEN_FILE', 'azure_federated_token_file', true),
    ],
    volumeMounts: [
      { name: 'host-etc-kube', mountPath: '/etc/cloud-config', readOnly: true },
      { name: 'merged-cloud-config', mountPath: '/etc/merged-cloud-config' },
    ],
  };
}

/** The OpenShift-audience token workload identity exchanges for Azure credentials. */
const BOUND_SA_TOKEN: { volume: V1Volume; mount: { name: string; mountPath: string; readOnly: true } } = {
  volume: {
    name: 'bound-sa-token',
    projected: { sources: [{ serviceAccountToken: { path: 'token', audience: 'openshift' } }] },
  },
  mount: { name: 'bound-sa-token', mountPath: '/var/run/secrets/openshift/serviceaccount', readOnly: true },
};

const MERGED_CLOUD_CONFIG: V1Volume = { name: 'merged-cloud-config', emptyDir: {} };

function controllerManager(input: RenderInput): KubernetesObject {
  const flags = [
    '--v=3',
    '--cloud-config=$(CLOUD_CONFIG)',
    '--cloud-provider=azure',
    '--controllers=*,-cloud-node',
    '--configure-cloud-routes=false',
    '--use-service-account-credentials=true',
    '--bind-address=127.0.0.1',
    '--cluster-name=$(OCP_INFRASTRUCTURE_NAME)',
    ...leaderElectionFlags(input.namespace),
  ];
  return controlPlaneDeployment({
    name: 'azure-cloud-controller-manager',
    platform: 'Azure',
    namespace: input.namespace,
    pod: {
      initContainers: [credentialsInjector(input)],
      containers: [
        ccmContainer({
          image: imageFor(input, 'Azure', 'cloudControllerManagerAzure'),
          env: [
            { name: 'CLOUD_CONFIG', value: '/etc/kubernetes-cloud-config/cloud.conf' },
            infrastructureNameEnv(input),
          ],
          resources: { requests: { cpu: '200m', memory: '50Mi' } },
          ports: [{ ...HTTPS_PORT }],
          command: apiserverUrlCommand('/bin/azure-cloud-controller-manager', flags),
          volumeMounts: [
            { name: 'merged-cloud-config', mountPath: '/etc/kubernetes', readOnly: true },
            { name: 'config-accm', mountPath: '/etc/kubernetes-cloud-config', readOnly: true },
            TRUSTED_CA.mount,
            BOUND_SA_TOKEN.mount,
          ],
        }),
      ],
      volumes: [
        cloudConfVolume('config-accm'),
        TRUSTED_CA.volume,
        HOST_ETC_KUBE.volume,
        BOUND_SA_TOKEN.volume,
        MERGED_CLOUD_CONFIG,
      ],
    },
  });
}

function nodeManager(input: RenderInput): V1DaemonSet {
  const name = 'azure-cloud-node-manager';
  const labels = { 'k8s-app': name, [CNM_PROVIDER_LABEL]: 'Azure' };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: {
      name,
      namespace: input.namespace,
      labels: { ...labels, component: name, 'kubernetes.io/cluster-service': 'true' },
    },
    spec: {
      selector: { matchLabels: { ...labels } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%' } },
      template: {
        metadata: {
          labels: { ...labels },
          annotations: { 'cluster-autoscaler.kubernetes.io/daemonset-pod': 'true', ...workloadAnnotation() },
        },
        spec: {
          priorityClassName: 'system-node-critical',
          serviceAccountName: CNM_SERVICE_ACCOUNT,
          hostNetwork: true,
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          // Every node, whatever NoSchedule taint it has.
          tolerations: [
            { effect: 'NoSchedule', operator: 'Exists' },
            {
              effect: 'NoExecute',
              key: 'node.kubernetes.io/unreachable',
              operator: 'Exists',
              tolerationSeconds: 120,
            },
            {
              effect: 'NoExecute',
              key: 'node.kubernetes.io/not-ready',
              operator: 'Exists',
              tolerationSeconds: 120,
            },
          ],
          initContainers: [credentialsInjector(input)],
          containers: [
            {
              name: 'cloud-node-manager',
              image: imageFor(input, 'Azure', 'cloudNodeManagerAzure'),
              imagePullPolicy: 'IfNotPresent',
              command: apiserverUrlCommand('/bin/azure-cloud-node-manager', [
                '--node-name=$(NODE_NAME)',
                '--wait-routes=false',
                '--enable-deprecated-beta-topology-labels',
              ]),
              ports: [{ containerPort: CNM_PORT, name: 'https', protocol: 'TCP' }],
              env: [{ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
              volumeMounts: [
                { name: 'merged-cloud-config', mountPath: '/etc/kubernetes', readOnly: true },
                TRUSTED_CA.mount,
                BOUND_SA_TOKEN.mount,
              ],
              resources: { requests: { cpu: '50m', memory: '50Mi' } },
            },
          ],
          volumes: [TRUSTED_CA.volume, HOST_ETC_KUBE.volume, BOUND_SA_TOKEN.volume, MERGED_CLOUD_CONFIG],
        },
      },
    },
  };
}

function rbac(input: RenderInput): KubernetesObject[] {
  // Upstream's templates carry kube-system here; its SubstituteCommonPartsFromConfig moves every
  // namespaced object to the operands' namespace, which is what it applies.
  const providerRole: V1Role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'azure-cloud-provider', namespace: input.namespace },
    rules: [
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['aks-managed-resource-locker'],
        verbs: ['get', 'list', 'update'],
      },
      // A create carries no name to restrict.
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    ],
  };
  const providerBinding = namespacedBinding(
    'azure-cloud-provider:azure-cloud-provider',
    input.namespace,
    'azure-cloud-provider',
    [{ kind: 'ServiceAccount', name: 'azure-cloud-provider', namespace: 'kube-system' }],
  );
  const clusterRole: V1ClusterRole = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'azure-cloud-controller-manager' },
    rules: [
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
    ],
  };
  const clusterRoleBinding = clusterBinding(
    { name: 'cloud-controller-manager:azure-cloud-controller-manager' },
    'azure-cloud-controller-manager',
    [{ kind: 'ServiceAccount', name: CCM_SERVICE_ACCOUNT, namespace: input.namespace }],
  );
  return [providerRole, providerBinding, clusterRole, clusterRoleBinding];
}

function policies(input: RenderInput): KubernetesObject[] {
  const nodeAdmission = 'openshift-cloud-controller-manager-cloud-provider-azure-node-admission';
  const nodeName = 'authentication.kubernetes.io/node-name';
  const nodePolicy: V1ValidatingAdmissionPolicy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: nodeAdmission },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['nodes'] },
        ],
      },
      // Only the node manager's requests are checked; anyone else with RBAC may update Nodes.
      matchConditions: [
        {
          name: 'check-only-machine-config-daemon-requests',
          expression: `request.userInfo.username == 'system:serviceaccount:${input.namespace}:${CNM_SERVICE_ACCOUNT}'`,
        },
      ],
      validations: [
        // A node-name claim rules out a stolen token used from elsewhere.
        {
          expression: `has(request.userInfo.extra) && ('${nodeName}' in request.userInfo.extra)`,
          message: `this user must have a "${nodeName}" claim`,
        },
        {
          expression: `object.metadata.name == request.userInfo.extra["${nodeName}"][0]`,
          messageExpression:
            "'updates to Node ' + string(object.metadata.name) + ' may only be effected from the cloud node manager running on the same node'",
        },
      ],
    },
  };
  const idle = 'service.beta.kubernetes.io/azure-load-balancer-tcp-idle-timeout';
  const idlePolicyName = 'azure-load-balancer-tcp-idle-timeout-annotation-validation-policy';
  const idlePolicy: V1ValidatingAdmissionPolicy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: idlePolicyName },
    spec: {
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['services'] },
        ],
      },
      variables: [
        {
          name: 'hasIdleTimeout',
          expression: `has(object.metadata.annotations) && '${idle}' in object.metadata.annotations`,
        },
        { name: 'idleTimeoutValue', expression: `object.metadata.?annotations['${idle}'].orValue("")` },
        {
          name: 'hasOldIdleTimeout',
          expression: `oldObject != null && oldObject.metadata.?annotations != null && '${idle}' in oldObject.metadata.annotations`,
        },
        { name: 'oldIdleTimeoutValue', expression: `oldObject.metadata.?annotations['${idle}'].orValue("")` },
        {
          name: 'valueHasChanged',
          expression:
            'variables.hasIdleTimeout && (!variables.hasOldIdleTimeout || variables.oldIdleTimeoutValue != variables.idleTimeoutValue)',
        },
      ],
      validations: [
        {
          expression:
            "!variables.hasIdleTimeout || !variables.valueHasChanged || variables.idleTimeoutValue.matches('^[0-9]+$')",
          message: `value for annotation '${idle}' must be an integer`,
        },
        {
          expression:
            '!variables.hasIdleTimeout || !variables.valueHasChanged || (int(variables.idleTimeoutValue) >= 4 && int(variables.idleTimeoutValue) <= 100)',
          message: `value for annotation '${idle}' must be no less than 4 and no more than 100`,
        },
      ],
    },
  };
  const binding = (name: string, policyName: string): V1ValidatingAdmissionPolicyBinding => ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName, validationActions: ['Deny'] },
  });
  return [
    nodePolicy,
    binding(nodeAdmission, nodeAdmission),
    idlePolicy,
    binding('azure-load-balancer-tcp-idle-timeout-validation-annotation-binding', idlePolicyName),
  ];
}
