/**
 * What the operator's controllers share: where things are (the operands' and the operator's
 * namespaces, the system trust bundle, the images), the release it reports, and the field
 * managers it writes with.
 */
import type { OpenStackCcm, OperandRenderer } from './operands/types.ts';

export interface OperatorSettings {
  /** Where the operands and the synced config go (`--namespace`): openshift-cloud-controller-manager. */
  managedNamespace: string;
  /** Where the operator runs: the images ConfigMap is there. */
  operatorNamespace: string;
  /** The release the operator reports as its `operator` version (RELEASE_VERSION). */
  releaseVersion: string;
  /** The system trust bundle the CCM trust bundle is built on. */
  systemTrustBundle: string;
  /** `--images-json`: the images file (the mounted ConfigMap); without it the ConfigMap is read from the API. */
  imagesFile?: string | undefined;
  /** Which CCM runs for OpenStack. */
  openstackCcm: OpenStackCcm;
  /** The operand renderers (`renderOperands`). */
  render: OperandRenderer;
}

/**
 * The field manager of the operands and of the operator's own ClusterOperator conditions: the
 * name upstream's operator applied its operands with, so it takes over what upstream applied.
 */
export const OPERATOR_FIELD_MANAGER = 'cloud-controller-manager';
export const CLOUD_CONFIG_FIELD_MANAGER = 'cloud-controller-manager-cloud-config-sync';
export const TRUSTED_CA_FIELD_MANAGER = 'cloud-controller-manager-trusted-ca-sync';
