/**
 * The boundary between the operator's controllers and the operand renderers: everything a
 * platform's cloud controller manager manifests depend on, read once from the cluster (the
 * Infrastructure, the Proxy, the FeatureGate, the images ConfigMap) by the operator, or from files
 * by `shiftstack ccm-operator render`, both through `renderInput` (../render-input.ts). A renderer is a pure function of this input, so the
 * operator applies exactly what `render` prints. Mirrors upstream CCCMO's `config.OperatorConfig`.
 */
import type { KubernetesObject } from '@kubernetes/client-node';

/** Platform types as `Infrastructure.status.platformStatus.type` names them (the ones with operands). */
export const OPERAND_PLATFORMS = [
  'OpenStack',
  'AWS',
  'Azure',
  'GCP',
  'VSphere',
  'IBMCloud',
  'PowerVS',
  'Nutanix',
] as const;
export type OperandPlatform = (typeof OPERAND_PLATFORMS)[number];

/** Which cloud controller manager runs for OpenStack: ours by default, or upstream OCCM's image. */
export type OpenStackCcm = 'shiftstack' | 'upstream';

export interface OperandProxy {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
}

export interface RenderInput {
  platform: OperandPlatform;
  /**
   * `Infrastructure.status.platformStatus` as upstream's `OperatorConfig` holds it: the type and,
   * under the type in lower case (`openstack`, `ibmcloud`, …), the platform's own block.
   */
  platformStatus: Record<string, unknown>;
  /** `Infrastructure.status.infrastructureName`: the cluster's name in the cloud (`--cluster-name`). */
  infrastructureName: string;
  /** The images ConfigMap's `images.json` (upstream's `cloud-controller-manager-images`), by key. */
  images: Readonly<Record<string, string>>;
  openstackCcm: OpenStackCcm;
  /** Where the operands go: `openshift-cloud-controller-manager` unless told otherwise. */
  namespace: string;
  /**
   * `Infrastructure.status.controlPlaneTopology == SingleReplica`: Deployments get one replica and
   * no PodDisruptionBudget, as upstream's operator renders them. (The SNO lease timings are the
   * operator's own; upstream's operands keep 137s/107s/26s.)
   */
  singleReplica: boolean;
  /** Enabled feature gates, passed to the CCMs as upstream does (`--feature-gates=…`). */
  featureGates: readonly string[];
  proxy?: OperandProxy;
  /**
   * The cluster's TLS profile for the CCMs' serving port (upstream's `OperatorConfig.TLSCipherSuites`
   * and `TLSMinVersion`), passed as `--tls-cipher-suites`/`--tls-min-version` where upstream does.
   */
  tls?: OperandTls;
}

export interface OperandTls {
  /** Go's cipher suite names, comma-separated (`TLS_AES_128_GCM_SHA256,…`). */
  cipherSuites?: string;
  /** `VersionTLS12` or `VersionTLS13`. */
  minVersion?: string;
}

export interface RenderedOperands {
  /** Every object to apply, in apply order (namespaces and RBAC before workloads). */
  objects: KubernetesObject[];
}

export type OperandRenderer = (input: RenderInput) => RenderedOperands;
