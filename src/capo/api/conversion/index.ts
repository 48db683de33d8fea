/**
 * CAPO's conversions between infrastructure.cluster.x-k8s.io v1beta1 (stored; what our
 * controllers use) and v1beta2 (served beside it), one KindConversion per kind for the conversion
 * webhook that `shiftstack capo` serves. Pure functions of the object: what one version cannot
 * hold rides in the `cluster.x-k8s.io/conversion-data` annotation (./carry.ts), so round trips
 * through the other version are lossless; no other metadata is touched.
 */
import {
  ConversionError,
  type ConvertibleObject,
  type KindConversion,
} from '../../../kube/conversion/types.ts';
import { INFRASTRUCTURE_GROUP } from '../kinds.ts';
import { type Carry, isObj, type Json, withCarry } from './carry.ts';
import {
  openStackClusterDown,
  openStackClusterTemplateDown,
  openStackClusterTemplateUp,
  openStackClusterUp,
} from './cluster.ts';
import {
  openStackMachineDown,
  openStackMachineTemplateDown,
  openStackMachineTemplateUp,
  openStackMachineUp,
} from './machine.ts';

export { CONVERSION_DATA_ANNOTATION } from './carry.ts';

const VERSIONS = ['v1beta1', 'v1beta2'] as const;

type Step = (o: Json, carry: Carry) => void;

function kindConversion(kind: string, up: Step, down: Step): KindConversion {
  return {
    group: INFRASTRUCTURE_GROUP,
    kind,
    versions: VERSIONS,
    convert(obj: ConvertibleObject, toVersion: string): ConvertibleObject {
      const metadata = isObj(obj.metadata) ? obj.metadata : {};
      const about = {
        kind,
        namespace: typeof metadata.namespace === 'string' ? metadata.namespace : undefined,
        name: typeof metadata.name === 'string' ? metadata.name : undefined,
      };
      const [group, from] = obj.apiVersion.split('/');
      if (group !== INFRASTRUCTURE_GROUP || obj.kind !== kind) {
        throw new ConversionError(
          `${obj.apiVersion} ${obj.kind} is not a ${INFRASTRUCTURE_GROUP} ${kind}`,
          about,
        );
      }
      for (const v of [from, toVersion]) {
        if (!(VERSIONS as readonly (string | undefined)[]).includes(v)) {
          throw new ConversionError(
            `${kind} has no version ${v ?? '(none)'}; it is served in ${VERSIONS.join(' and ')}`,
            about,
          );
        }
      }
      if (from === toVersion) return structuredClone(obj);
      const step = from === 'v1beta1' ? up : down;
      const out = withCarry(obj, from as string, toVersion, step);
      out.apiVersion = `${INFRASTRUCTURE_GROUP}/${toVersion}`;
      return out as ConvertibleObject;
    },
  };
}

export const CAPO_CONVERSIONS: readonly KindConversion[] = [
  kindConversion('OpenStackCluster', openStackClusterUp, openStackClusterDown),
  kindConversion('OpenStackClusterTemplate', openStackClusterTemplateUp, openStackClusterTemplateDown),
  kindConversion('OpenStackMachine', openStackMachineUp, openStackMachineDown),
  kindConversion('OpenStackMachineTemplate', openStackMachineTemplateUp, openStackMachineTemplateDown),
];
