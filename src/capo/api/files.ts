/**
 * The CRD files of deploy/capo/crds as text: one YAML file per CRD, named like controller-gen
 * names them (`<group>_<plural>.yaml`). `npm run gen:crds` writes them; crds.test.ts fails when
 * the files differ from what this returns, so the code stays the one source of truth.
 *
 * A kind served in several versions (CAPO's OpenStackCluster, OpenStackClusterTemplate,
 * OpenStackMachine, OpenStackMachineTemplate and Cluster API's Cluster and Machine: v1beta1 stored,
 * the version our controllers use; v1beta2 converted) gets `spec.conversion` naming the webhook: in
 * the files, the Service of deploy/capo with cert-manager's CA injection, as CAPO's config/ has it;
 * in test beds and the demo (`capoCustomResourceDefinitions`), the URL of a webhook served in
 * process. A CRD never serves v1beta2 without a webhook: strategy None would hand out v1beta1
 * objects labelled v1beta2.
 */
import {
  crdFile,
  customResourceDefinition,
  type CrdFile,
  type CrdOptions,
  type CustomResourceDefinition,
  type Kind,
  type WebhookClientConfig,
} from '../../kube/crd/kind.ts';
import { clusterV1beta2, machineV1beta2 } from './capi-v1beta2.ts';
import { ALL_KINDS, cluster, machine } from './kinds.ts';
import { V1BETA2_KINDS } from './v1beta2/kinds.ts';
import {
  IN_CLUSTER_CLIENT_CONFIG,
  INJECT_CA_ANNOTATION,
  SERVING_CERT,
  WEBHOOK_NAMESPACE,
  webhookConversion,
} from './webhook.ts';

export const CRD_DIR = 'deploy/capo/crds';

const HEADER = '# Generated from src/capo/api by scripts/gen-crds.ts (npm run gen:crds). Do not edit.\n';

/** The version CAPO's multi-version kinds are stored in (CAPO's hub at the snapshot we follow). */
export const STORAGE_VERSION = 'v1beta1';

export type { CrdFile };

/** Every CRD's versions, the stored one first, in the order the files are written. */
export const CRD_VERSIONS: readonly (readonly Kind<object>[])[] = ALL_KINDS.map((k) => {
  if (k === cluster) return [cluster, clusterV1beta2];
  if (k === machine) return [machine, machineV1beta2];
  const v1beta2 = V1BETA2_KINDS.find((v) => v.crdName === k.crdName);
  return v1beta2 ? [k, v1beta2] : [k];
});

function options(
  versions: readonly Kind<object>[],
  clientConfig: WebhookClientConfig,
  inCluster: boolean,
): CrdOptions {
  if (versions.length < 2) return {};
  return {
    storageVersion: STORAGE_VERSION,
    conversion: webhookConversion(clientConfig),
    ...(inCluster ? { annotations: { [INJECT_CA_ANNOTATION]: `${WEBHOOK_NAMESPACE}/${SERVING_CERT}` } } : {}),
  };
}

/** What deploy/capo/crds holds: the conversion webhook is the Service of deploy/capo. */
export function crdFiles(): CrdFile[] {
  return CRD_VERSIONS.map((versions) =>
    crdFile(versions, HEADER, options(versions, IN_CLUSTER_CLIENT_CONFIG, true)),
  );
}

/**
 * The CRDs with their conversion webhook at `clientConfig` (a URL and the caBundle of the served
 * certificate): what a test bed or the demo installs next to an in-process webhook.
 */
export function capoCustomResourceDefinitions(clientConfig: WebhookClientConfig): CustomResourceDefinition[] {
  return CRD_VERSIONS.map((versions) =>
    customResourceDefinition(versions, options(versions, clientConfig, false)),
  );
}
