/**
 * Power VS's CCM as upstream's operator renders it: IBM's CCM binary in IBM's Deployment shape
 * (ibmcloud.ts), named `powervs-cloud-controller-manager` with its own image key
 * (`cloudControllerManagerPowerVS`, as CCCMO's `cloud_test.go` expects), and public endpoints, which
 * `ibm.go`'s `getEnablePublicEndpointValue` turns on for Power VS only. The credentials Secret keeps
 * the name of CCCMO's `pkg/cloud/powervs/assets/deployment.yaml` (06a3486d).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { ibmDeployment } from './ibmcloud.ts';
import type { RenderInput } from './types.ts';

export function renderPowerVS(input: RenderInput): KubernetesObject[] {
  return [
    ibmDeployment(input, {
      platform: 'PowerVS',
      name: 'powervs-cloud-controller-manager',
      imageKey: 'cloudControllerManagerPowerVS',
      publicEndpoint: true,
      credentialsSecret: 'ibm-cloud-credentials',
    }),
  ];
}
