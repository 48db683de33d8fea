/**
 * The pieces the OpenShift kinds share: the condition shapes of config.openshift.io's
 * ClusterOperator and operator.openshift.io's operators, and the API groups.
 */
import { array, enumOf, type Infer, object, string } from '../../kube/crd/schema.ts';

export const CONFIG_GROUP = 'config.openshift.io';
export const OPERATOR_GROUP = 'operator.openshift.io';

export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;
export type ConditionStatus = (typeof CONDITION_STATUSES)[number];

/**
 * configv1.ClusterOperatorStatusCondition and operatorv1.OperatorCondition: type, status and
 * lastTransitionTime required; reason and message free (no observedGeneration, unlike
 * metav1.Condition).
 */
export const openshiftCondition = object(
  {
    type: string({ description: 'The aspect reported, CamelCase.', maxLength: 316 }),
    status: enumOf(CONDITION_STATUSES, { description: 'True, False or Unknown.' }),
    lastTransitionTime: string({ format: 'date-time', description: 'When status last changed.' }),
    reason: string({ description: 'Why, CamelCase.' }),
    message: string({ description: 'Details for humans.' }),
  },
  { required: ['type', 'status', 'lastTransitionTime'] },
);
export type OpenShiftCondition = Infer<typeof openshiftCondition>;

export const openshiftConditions = array(openshiftCondition, {
  listType: { map: ['type'] },
  description: 'The state of the operator, one condition per type.',
});
