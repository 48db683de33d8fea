/**
 * The images the operands run, by the keys of upstream's `cloud-controller-manager-images`
 * ConfigMap (`images.json`, CCCMO `pkg/config.ImagesReference`), plus `shiftstack`: the image of
 * `shiftstack ccm`, the default OpenStack CCM.
 *
 * `shiftstack` is its own key rather than `cloudControllerManagerOpenStack` because on OpenShift
 * the cluster-version operator fills that one with the release's OCCM image: our command line run
 * in it would fail. Keeping both lets `openstackCcm: upstream` switch back to exactly what the
 * release ships.
 */
import { OperandRenderError } from './errors.ts';
import type { OperandPlatform, RenderInput } from './types.ts';

export const IMAGE_KEYS = [
  'cloudControllerManagerOperator',
  'cloudControllerManagerAWS',
  'cloudControllerManagerAzure',
  'cloudNodeManagerAzure',
  'cloudControllerManagerGCP',
  'cloudControllerManagerIBM',
  'cloudControllerManagerOpenStack',
  'cloudControllerManagerVSphere',
  'cloudControllerManagerPowerVS',
  'cloudControllerManagerNutanix',
  'shiftstack',
] as const;
export type ImageKey = (typeof IMAGE_KEYS)[number];

/**
 * What `render` uses without `--images`: the OKD builds upstream's images manifest names (the
 * same binaries OpenShift ships, pullable without a subscription), and shiftstack's own image as
 * deploy/ccm names it. Set your own registry's with an images file.
 */
export const DEFAULT_IMAGES: Readonly<Record<ImageKey, string>> = {
  cloudControllerManagerOperator: 'quay.io/openshift/origin-cluster-cloud-controller-manager-operator',
  cloudControllerManagerAWS: 'quay.io/openshift/origin-aws-cloud-controller-manager',
  cloudControllerManagerAzure: 'quay.io/openshift/origin-azure-cloud-controller-manager',
  cloudNodeManagerAzure: 'quay.io/openshift/origin-azure-cloud-node-manager',
  cloudControllerManagerGCP: 'quay.io/openshift/origin-gcp-cloud-controller-manager',
  cloudControllerManagerIBM: 'quay.io/openshift/origin-ibm-cloud-controller-manager',
  cloudControllerManagerOpenStack: 'quay.io/openshift/origin-openstack-cloud-controller-manager',
  cloudControllerManagerVSphere: 'quay.io/openshift/origin-vsphere-cloud-controller-manager',
  cloudControllerManagerPowerVS: 'quay.io/openshift/origin-powervs-cloud-controller-manager',
  cloudControllerManagerNutanix: 'quay.io/openshift/origin-nutanix-cloud-controller-manager',
  shiftstack: 'shiftstack:latest',
};

/** The image under `key`, or an OperandRenderError naming the key (upstream: "missed images in config"). */
export function imageFor(input: RenderInput, platform: OperandPlatform, key: ImageKey): string {
  const image = input.images[key]?.trim();
  if (!image) {
    throw new OperandRenderError(
      platform,
      key,
      `${platform}: the images map has no "${key}" image. Fix: add "${key}" to images.json of the images ConfigMap`,
    );
  }
  return image;
}
