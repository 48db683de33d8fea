/**
 * AWS's CCM as upstream's operator renders it: CCCMO `pkg/cloud/aws/assets/deployment.yaml` (the
 * 2023 version with `--configure-cloud-routes=false` and the `ccm-trusted-ca` mount) and the
 * ValidatingAdmissionPolicy of `assets/validating-admission-policy*.yaml` (f2cf920a), which keeps
 * a Service's load-balancer type from changing under an existing load balancer.
 */
import type {
  KubernetesObject,
  V1ValidatingAdmissionPolicy,
  V1ValidatingAdmissionPolicyBinding,
} from '@kubernetes/client-node';
import {
  apiserverUrlCommand,
  ccmContainer,
  controlPlaneDeployment,
  HOST_ETC_KUBE,
  HTTPS_PORT,
  leaderElectionFlags,
  TRUSTED_CA,
} from './common.ts';
import { imageFor } from './images.ts';
import type { RenderInput } from './types.ts';

export function renderAws(input: RenderInput): KubernetesObject[] {
  const flags = [
    '--cloud-provider=aws',
    '--use-service-account-credentials=true',
    '--configure-cloud-routes=false',
    ...leaderElectionFlags(input.namespace),
    '-v=2',
  ];
  const deployment = controlPlaneDeployment({
    name: 'aws-cloud-controller-manager',
    platform: 'AWS',
    namespace: input.namespace,
    pod: {
      containers: [
        ccmContainer({
          image: imageFor(input, 'AWS', 'cloudControllerManagerAWS'),
          command: apiserverUrlCommand('/bin/aws-cloud-controller-manager', flags),
          ports: [{ ...HTTPS_PORT }],
          resources: { requests: { cpu: '200m', memory: '50Mi' } },
          volumeMounts: [HOST_ETC_KUBE.mount, TRUSTED_CA.mount],
        }),
      ],
      volumes: [TRUSTED_CA.volume, HOST_ETC_KUBE.volume],
    },
  });
  return [...loadBalancerTypePolicy(), deployment];
}

const LB_TYPE = 'service.beta.kubernetes.io/aws-load-balancer-type';

function loadBalancerTypePolicy(): KubernetesObject[] {
  const name = 'openshift-cloud-controller-manager-cloud-provider-aws';
  const has = (o: string) => `(has(${o}.metadata.annotations) && '${LB_TYPE}' in ${o}.metadata.annotations)`;
  const policy: V1ValidatingAdmissionPolicy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['services'] },
        ],
      },
      validations: [
        {
          expression:
            `${has('object')} == ${has('oldObject')} && ` +
            `(${has('object')} ? object.metadata.annotations['${LB_TYPE}'] == oldObject.metadata.annotations['${LB_TYPE}'] : true)`,
          message: `The annotation '${LB_TYPE}' may not be added, removed, or have its value changed. Changing the type of an existing load balancer is not supported.`,
          reason: 'Invalid',
        },
      ],
    },
  };
  const binding: V1ValidatingAdmissionPolicyBinding = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName: name, validationActions: ['Deny'] },
  };
  return [policy, binding];
}
