/**
 * IBM Cloud's CCM as upstream's operator renders it: CCCMO `pkg/cloud/ibm/assets/deployment.yaml`
 * (ee572934, with `VPCCTL_PUBLIC_ENDPOINT` from `ibm.go`'s `enablePublicEndpoint`): IBM's own CCM
 * binary, its config directory `/etc/ibm` (the synced `cloud-conf`) and credentials `/etc/vpc`, a
 * liveness probe on the secure port, a fixed cipher-suite list. Power VS runs the same binary in
 * the same shape (powervs.ts), with public endpoints.
 */
import type { KubernetesObject, V1Deployment } from '@kubernetes/client-node';
import {
  apiserverUrlCommand,
  CCM_PORT,
  ccmContainer,
  CLOUD_CONF_CONFIGMAP,
  controlPlaneDeployment,
  HOST_ETC_KUBE,
  HTTPS_PORT,
  leaderElectionFlags,
  TRUSTED_CA,
} from './common.ts';
import { imageFor, type ImageKey } from './images.ts';
import type { OperandPlatform, RenderInput } from './types.ts';

/** The suites IBM's asset passes (TLS 1.2 ECDHE with AEAD, and TLS 1.3's). */
const IBM_CIPHER_SUITES = [
  'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
  'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
  'TLS_AES_128_GCM_SHA256',
  'TLS_CHACHA20_POLY1305_SHA256',
  'TLS_AES_256_GCM_SHA384',
].join(',');

export interface IbmFlavour {
  platform: Extract<OperandPlatform, 'IBMCloud' | 'PowerVS'>;
  name: string;
  imageKey: ImageKey;
  /** Upstream's `getEnablePublicEndpointValue`: true on Power VS only. */
  publicEndpoint: boolean;
  /** The Secret with the API key (key per IBM's CCM), mounted at /etc/vpc. */
  credentialsSecret: string;
}

export function ibmDeployment(input: RenderInput, f: IbmFlavour): V1Deployment {
  const flags = [
    '--use-service-account-credentials=true',
    '--configure-cloud-routes=false',
    '--cloud-provider=ibm',
    '--cloud-config=/etc/ibm/cloud.conf',
    '--profiling=false',
    ...leaderElectionFlags(input.namespace),
    `--tls-cipher-suites=${IBM_CIPHER_SUITES}`,
    '--v=2',
  ];
  return controlPlaneDeployment({
    name: f.name,
    platform: f.platform,
    namespace: input.namespace,
    pod: {
      terminationGracePeriodSeconds: 90,
      containers: [
        ccmContainer({
          image: imageFor(input, f.platform, f.imageKey),
          env: [
            { name: 'VPCCTL_CLOUD_CONFIG', value: '/etc/ibm/cloud.conf' },
            { name: 'VPCCTL_PUBLIC_ENDPOINT', value: String(f.publicEndpoint) },
          ],
          command: apiserverUrlCommand('/bin/ibm-cloud-controller-manager', flags),
          livenessProbe: {
            httpGet: { path: '/healthz', port: CCM_PORT, scheme: 'HTTPS' },
            initialDelaySeconds: 300,
            timeoutSeconds: 160,
          },
          ports: [{ ...HTTPS_PORT }],
          // Requests but no limits: OpenShift's rule for every workload it schedules.
          resources: { requests: { cpu: '75m', memory: '60Mi' } },
          terminationMessagePolicy: 'FallbackToLogsOnError',
          volumeMounts: [
            HOST_ETC_KUBE.mount,
            { name: 'cloud-conf', mountPath: '/etc/ibm' },
            { name: 'ibm-cloud-credentials', mountPath: '/etc/vpc' },
            TRUSTED_CA.mount,
          ],
        }),
      ],
      volumes: [
        TRUSTED_CA.volume,
        HOST_ETC_KUBE.volume,
        { name: 'cloud-conf', configMap: { name: CLOUD_CONF_CONFIGMAP, defaultMode: 0o644 } },
        { name: 'ibm-cloud-credentials', secret: { secretName: f.credentialsSecret, defaultMode: 0o644 } },
      ],
    },
  });
}

export function renderIBMCloud(input: RenderInput): KubernetesObject[] {
  return [
    ibmDeployment(input, {
      platform: 'IBMCloud',
      name: 'ibm-cloud-controller-manager',
      imageKey: 'cloudControllerManagerIBM',
      publicEndpoint: false,
      credentialsSecret: 'ibm-cloud-credentials',
    }),
  ];
}
