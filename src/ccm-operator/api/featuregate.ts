/**
 * config.openshift.io/v1 FeatureGate `cluster`: the feature set, and per release version the
 * gates it enables (`status.featureGates[].enabled[].name`), which the operator passes to the CCMs.
 */
import { array, type Infer, object, openObject, string } from '../../kube/crd/schema.ts';

const gateNames = (what: string) =>
  array(object({ name: string() }, { required: ['name'] }), { description: what });

export const featureGateSpec = openObject({
  featureSet: string({
    description: 'Default, TechPreviewNoUpgrade, DevPreviewNoUpgrade or CustomNoUpgrade.',
  }),
  customNoUpgrade: openObject({
    enabled: array(string(), { description: 'Gates turned on (CustomNoUpgrade).' }),
    disabled: array(string(), { description: 'Gates turned off (CustomNoUpgrade).' }),
  }),
});
export type FeatureGateSpec = Infer<typeof featureGateSpec>;

export const featureGateStatus = openObject({
  featureGates: array(
    openObject(
      {
        version: string({ description: 'The release version these gates apply to.' }),
        enabled: gateNames('The gates on.'),
        disabled: gateNames('The gates off.'),
      },
      { required: ['version'] },
    ),
  ),
});
export type FeatureGateStatus = Infer<typeof featureGateStatus>;
