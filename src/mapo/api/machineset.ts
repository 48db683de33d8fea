/**
 * machine.openshift.io/v1beta1 MachineSet's spec and status (openshift/api
 * `machine/v1beta1/types_machineset.go`, with the MachineAPIMigration fields). `/scale` reads
 * spec.replicas, status.replicas and status.labelSelector (kinds.ts).
 */
import { enumOf, type Infer, integer, object, string } from '../../kube/crd/schema.ts';
import {
  authorityState,
  authoritativeAPI,
  conditions,
  labelSelector,
  objectMeta,
  synchronizedAPI,
} from './common.ts';
import { machineSpec } from './machine.ts';

/** Which Machines go first when scaling down (after those marked for deletion and the unhealthy). */
export const DELETE_POLICIES = ['Random', 'Newest', 'Oldest'] as const;
export type DeletePolicy = (typeof DELETE_POLICIES)[number];

const replicas = (description: string) => integer({ format: 'int32', description });

export const machineSetSpec = object(
  {
    replicas: replicas('The number of Machines wanted; 1 when unset.').default(1),
    minReadySeconds: replicas('How long a new Machine’s Node must be ready before it counts as available.'),
    deletePolicy: enumOf(DELETE_POLICIES, {
      description: 'Which Machines go first when scaling down: Random (the default), Newest or Oldest.',
    }),
    selector: labelSelector.describe('The Machines this set counts; must match the template’s labels.'),
    template: object({
      metadata: objectMeta.describe('Labels and annotations of the Machines created.'),
      spec: machineSpec.describe('The spec of the Machines created.'),
    }).describe('The Machine created when too few exist.'),
    authoritativeAPI,
  },
  { required: ['selector'] },
);
export type MachineSetSpec = Infer<typeof machineSetSpec>;

export const machineSetStatus = object({
  replicas: replicas('The number of Machines last observed.'),
  fullyLabeledReplicas: replicas('Machines carrying every label of the template.'),
  readyReplicas: replicas('Machines whose Node is Ready.'),
  availableReplicas: replicas('Machines whose Node has been Ready for minReadySeconds.'),
  labelSelector: string({
    minLength: 1,
    maxLength: 4096,
    description: 'spec.selector as a string, which /scale shows as status.selector.',
  }),
  observedGeneration: integer({ format: 'int64' }),
  errorReason: string({ description: 'A terminal problem with the template (InvalidConfiguration).' }),
  errorMessage: string(),
  conditions,
  authoritativeAPI: authorityState,
  synchronizedAPI,
  synchronizedGeneration: integer({ format: 'int64', minimum: 0 }),
});
export type MachineSetStatus = Infer<typeof machineSetStatus>;
