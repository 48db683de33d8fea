/**
 * The pieces Machine and MachineSet share (openshift/api `machine/v1beta1/types_provider.go`,
 * `types_machine.go`): the Machine API's own ObjectMeta subset, its Condition, lifecycle hooks,
 * taints, node addresses and object references, and the authoritative-API values of the
 * migration to Cluster API.
 */
import { anyObject, array, boolean, enumOf, type Infer, map, object, string } from '../../kube/crd/schema.ts';

export const MACHINE_GROUP = 'machine.openshift.io';
export const MACHINE_VERSION = 'v1beta1';
export const MACHINE_API_VERSION = `${MACHINE_GROUP}/${MACHINE_VERSION}`;

/** Who reconciles a Machine or MachineSet: the Machine API, Cluster API, or (status only) neither, mid-handover. */
export const AUTHORITATIVE_APIS = ['MachineAPI', 'ClusterAPI'] as const;
export type AuthoritativeAPI = (typeof AUTHORITATIVE_APIS)[number];
export const AUTHORITY_STATES = ['MachineAPI', 'ClusterAPI', 'Migrating'] as const;
export type AuthorityState = (typeof AUTHORITY_STATES)[number];

export const authoritativeAPI = enumOf(AUTHORITATIVE_APIS, {
  description:
    'The API whose controllers manage this object: MachineAPI (the default) or ClusterAPI. The switch is accepted once status.authoritativeAPI shows it.',
}).default('MachineAPI');

export const authorityState = enumOf(AUTHORITY_STATES, {
  description: 'The API managing the object now; Migrating while the handover runs.',
}).rules({
  rule: "self == 'Migrating' || self == oldSelf || oldSelf == 'Migrating'",
  message:
    'The authoritativeAPI field must not transition directly from MachineAPI to ClusterAPI or vice versa. It must transition through Migrating.',
});

export const synchronizedAPI = enumOf(AUTHORITATIVE_APIS, {
  description: 'The last stable authoritativeAPI, to restore when a migration is cancelled.',
});

const stringMap = (what: string) => map(string(), { description: what });

const ownerReference = object(
  {
    apiVersion: string(),
    kind: string(),
    name: string(),
    uid: string(),
    controller: boolean(),
    blockOwnerDeletion: boolean(),
  },
  { required: ['apiVersion', 'kind', 'name', 'uid'], atomic: true },
);

/**
 * The Machine API's ObjectMeta (not metav1's): the fields a template or a Machine's spec may set
 * for the object or Node it describes.
 */
export const objectMeta = object({
  name: string(),
  generateName: string(),
  namespace: string(),
  labels: stringMap('Labels to put on the object (on the Node, for spec.metadata).'),
  annotations: stringMap('Annotations to put on the object (on the Node, for spec.metadata).'),
  ownerReferences: array(ownerReference, { listType: { map: ['uid'] } }),
});
export type ObjectMeta = Infer<typeof objectMeta>;

const lifecycleHook = object(
  {
    name: string({
      minLength: 3,
      maxLength: 256,
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      description: 'Unique among the hooks of its kind: CamelCase, or prefixed as foo.example.com/CamelCase.',
    }),
    owner: string({
      minLength: 3,
      maxLength: 512,
      description: 'Who holds the hook (a controller such as clusteroperator/etcd, or an administrator).',
    }),
  },
  { required: ['name', 'owner'] },
);
export type LifecycleHook = Infer<typeof lifecycleHook>;

export const lifecycleHooks = object({
  preDrain: array(lifecycleHook, {
    listType: { map: ['name'] },
    description: 'While any is present, the Node is not drained (nor the machine terminated).',
  }),
  preTerminate: array(lifecycleHook, {
    listType: { map: ['name'] },
    description: 'While any is present, the instance is not deleted (checked after the drain).',
  }),
}).describe('Points of the machine lifecycle that wait while hooks are present.');
export type LifecycleHooks = Infer<typeof lifecycleHooks>;

export const taint = object(
  {
    key: string(),
    value: string(),
    effect: string({ description: 'NoSchedule, PreferNoSchedule or NoExecute.' }),
    timeAdded: string({ format: 'date-time' }),
  },
  { required: ['effect', 'key'] },
);
export type Taint = Infer<typeof taint>;

export const nodeAddress = object(
  {
    type: string({ description: 'Hostname, ExternalIP, InternalIP, ExternalDNS or InternalDNS.' }),
    address: string(),
  },
  { required: ['address', 'type'] },
);
export type NodeAddress = Infer<typeof nodeAddress>;

/** corev1.ObjectReference (status.nodeRef). */
export const objectReference = object(
  {
    apiVersion: string(),
    kind: string(),
    name: string(),
    namespace: string(),
    uid: string(),
    resourceVersion: string(),
    fieldPath: string(),
  },
  { atomic: true },
);
export type ObjectReference = Infer<typeof objectReference>;

export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;

/** The Machine API's Condition: severity beside status, lastTransitionTime required. */
export const condition = object(
  {
    type: string({ description: 'CamelCase, or foo.example.com/CamelCase.' }),
    status: string({ description: 'True, False or Unknown.' }),
    severity: string({ description: 'Error, Warning or Info; set only when status is False.' }),
    lastTransitionTime: string({ format: 'date-time' }),
    reason: string({ description: 'Why, CamelCase.' }),
    message: string({ description: 'Details for humans.' }),
  },
  { required: ['lastTransitionTime', 'status', 'type'] },
);
export type Condition = Infer<typeof condition>;

export const conditions = array(condition, {
  listType: { map: ['type'] },
  description: 'The state of the object, one condition per type.',
});

/** A provider's raw spec or status: any object, kept whole (`runtime.RawExtension`). */
export const rawExtension = (description: string) => anyObject({ description });

/** metav1.LabelSelector (MachineSet spec.selector). */
export const labelSelector = object(
  {
    matchLabels: stringMap('Labels a Machine must carry, all of them.'),
    matchExpressions: array(
      object(
        {
          key: string(),
          operator: string({ description: 'In, NotIn, Exists or DoesNotExist.' }),
          values: array(string(), { listType: 'atomic' }),
        },
        { required: ['key', 'operator'] },
      ),
      { listType: 'atomic' },
    ),
  },
  { atomic: true },
);
export type LabelSelector = Infer<typeof labelSelector>;
