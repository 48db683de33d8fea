/**
 * config.openshift.io/v1 ClusterOperator: the operator's report to the cluster (and to the cluster
 * version operator): conditions, the versions it runs, and the objects worth looking at.
 */
import { array, anyObject, type Infer, object, openObject, string } from '../../kube/crd/schema.ts';
import { openshiftConditions } from './common.ts';

export const clusterOperatorSpec = openObject({});
export type ClusterOperatorSpec = Infer<typeof clusterOperatorSpec>;

export const relatedObject = object(
  {
    group: string({ description: 'The API group, "" for the core group.' }),
    resource: string({ description: 'The resource (plural).' }),
    namespace: string(),
    name: string(),
  },
  { required: ['group', 'resource', 'name'] },
);
export type RelatedObject = Infer<typeof relatedObject>;

export const operandVersion = object(
  {
    name: string({ description: '`operator` for the operator itself, else an operand.' }),
    version: string(),
  },
  { required: ['name', 'version'] },
);
export type OperandVersion = Infer<typeof operandVersion>;

export const clusterOperatorStatus = object({
  conditions: openshiftConditions,
  versions: array(operandVersion, { listType: { map: ['name'] } }),
  relatedObjects: array(relatedObject, { description: 'Objects related to this operator.' }),
  extension: anyObject({ description: 'Operator-specific status.' }).with({ nullable: true }),
});
export type ClusterOperatorStatus = Infer<typeof clusterOperatorStatus>;
