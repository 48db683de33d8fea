/**
 * Which resource a call is about: apiVersion, kind, plural and scope, declared once per kind (a
 * static REST mapping; `KubeClient.discover` finds one for a kind only known at run time). The
 * type parameter carries the object's TypeScript type through the client, caches and controllers.
 * Also object keys: `namespace/name`, or `name` for cluster-scoped objects, as client-go's
 * `MetaNamespaceKeyFunc`.
 */
import type {
  CoreV1Event,
  EventsV1Event,
  KubernetesObject,
  V1ConfigMap,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1CustomResourceDefinition,
  V1DaemonSet,
  V1Deployment,
  V1EndpointSlice,
  V1Lease,
  V1Namespace,
  V1NetworkPolicy,
  V1ObjectMeta,
  V1Node,
  V1Pod,
  V1Role,
  V1RoleBinding,
  V1Secret,
  V1Service,
  V1ServiceAccount,
  V1SubjectAccessReview,
  V1TokenReview,
} from '@kubernetes/client-node';

export type { KubernetesObject } from '@kubernetes/client-node';

export interface ResourceType<T extends KubernetesObject = KubernetesObject> {
  /** `v1`, `apps/v1`, `example.com/v1alpha1`. */
  readonly apiVersion: string;
  readonly kind: string;
  /** The lower-case plural of the URL, e.g. `configmaps`. */
  readonly plural: string;
  readonly namespaced: boolean;
  /**
   * Reads (get, list, watch) ask for PartialObjectMetadata: the objects' metadata only, never their
   * contents. Made with `metadataOnly(type)`.
   */
  readonly metadataOnly?: true;
  /** Type-level only: never set. */
  readonly __object?: T;
}

/** An object as a metadata-only read gives it (`meta.k8s.io/v1` PartialObjectMetadata). */
export interface PartialObjectMetadata extends KubernetesObject {
  apiVersion: 'meta.k8s.io/v1';
  kind: 'PartialObjectMetadata';
  metadata: V1ObjectMeta;
}

/**
 * The metadata-only view of a kind (controller-runtime's metadata-only watches): informers of it
 * hold names, labels and owners, never a Secret's data, and cost a fraction of the memory. Its
 * informer is separate from the kind's full one.
 */
export function metadataOnly(type: ResourceType): ResourceType<PartialObjectMetadata> {
  const { apiVersion, kind, plural, namespaced } = type;
  return Object.freeze({ apiVersion, kind, plural, namespaced, metadataOnly: true as const });
}

/** Annotations that copy an object's contents (kubectl's last-applied: a Secret's data, verbatim). */
const CONTENT_ANNOTATIONS = ['kubectl.kubernetes.io/last-applied-configuration'];

/**
 * What a metadata-only read keeps of an answer: the metadata without managedFields and without
 * annotations that copy the contents, whatever the server sent (a server ignoring the Accept
 * header hands back whole objects; they are cut down here all the same).
 */
export function toPartialObjectMetadata(obj: KubernetesObject): PartialObjectMetadata {
  const { managedFields: _mf, annotations, ...metadata } = obj.metadata ?? {};
  const kept = Object.entries(annotations ?? {}).filter(([k]) => !CONTENT_ANNOTATIONS.includes(k));
  return {
    apiVersion: 'meta.k8s.io/v1',
    kind: 'PartialObjectMetadata',
    metadata: kept.length > 0 ? { ...metadata, annotations: Object.fromEntries(kept) } : metadata,
  };
}

/** Declares a kind; `T` is its object type. */
export function resourceType<T extends KubernetesObject>(def: {
  apiVersion: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}): ResourceType<T> {
  return Object.freeze({ ...def });
}

/** The object type a ResourceType carries. */
export type ObjectOf<R> = R extends ResourceType<infer T> ? T : never;

/** The group of an apiVersion; '' for the core group. */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** A short stable label for logs and metrics: `configmaps`, `leases.coordination.k8s.io`. */
export function resourceLabel(type: ResourceType): string {
  const group = groupOf(type.apiVersion);
  return group ? `${type.plural}.${group}` : type.plural;
}

/** A built-in kind; `Cluster` scope means its objects have no namespace. */
function builtin<T extends KubernetesObject>(
  apiVersion: string,
  kind: string,
  plural: string,
  scope: 'Namespaced' | 'Cluster' = 'Namespaced',
): ResourceType<T> {
  return resourceType<T>({ apiVersion, kind, plural, namespaced: scope === 'Namespaced' });
}

/** The built-in kinds the runtime and our controllers use. */
export const kinds = {
  Namespace: builtin<V1Namespace>('v1', 'Namespace', 'namespaces', 'Cluster'),
  Node: builtin<V1Node>('v1', 'Node', 'nodes', 'Cluster'),
  Pod: builtin<V1Pod>('v1', 'Pod', 'pods'),
  Service: builtin<V1Service>('v1', 'Service', 'services'),
  ConfigMap: builtin<V1ConfigMap>('v1', 'ConfigMap', 'configmaps'),
  Secret: builtin<V1Secret>('v1', 'Secret', 'secrets'),
  ServiceAccount: builtin<V1ServiceAccount>('v1', 'ServiceAccount', 'serviceaccounts'),
  Event: builtin<CoreV1Event>('v1', 'Event', 'events'),
  EventsV1Event: builtin<EventsV1Event>('events.k8s.io/v1', 'Event', 'events'),
  Lease: builtin<V1Lease>('coordination.k8s.io/v1', 'Lease', 'leases'),
  Deployment: builtin<V1Deployment>('apps/v1', 'Deployment', 'deployments'),
  DaemonSet: builtin<V1DaemonSet>('apps/v1', 'DaemonSet', 'daemonsets'),
  EndpointSlice: builtin<V1EndpointSlice>('discovery.k8s.io/v1', 'EndpointSlice', 'endpointslices'),
  NetworkPolicy: builtin<V1NetworkPolicy>('networking.k8s.io/v1', 'NetworkPolicy', 'networkpolicies'),
  Role: builtin<V1Role>('rbac.authorization.k8s.io/v1', 'Role', 'roles'),
  RoleBinding: builtin<V1RoleBinding>('rbac.authorization.k8s.io/v1', 'RoleBinding', 'rolebindings'),
  ClusterRole: builtin<V1ClusterRole>(
    'rbac.authorization.k8s.io/v1',
    'ClusterRole',
    'clusterroles',
    'Cluster',
  ),
  ClusterRoleBinding: builtin<V1ClusterRoleBinding>(
    'rbac.authorization.k8s.io/v1',
    'ClusterRoleBinding',
    'clusterrolebindings',
    'Cluster',
  ),
  TokenReview: builtin<V1TokenReview>('authentication.k8s.io/v1', 'TokenReview', 'tokenreviews', 'Cluster'),
  SubjectAccessReview: builtin<V1SubjectAccessReview>(
    'authorization.k8s.io/v1',
    'SubjectAccessReview',
    'subjectaccessreviews',
    'Cluster',
  ),
  CustomResourceDefinition: builtin<V1CustomResourceDefinition>(
    'apiextensions.k8s.io/v1',
    'CustomResourceDefinition',
    'customresourcedefinitions',
    'Cluster',
  ),
} as const;

/** The URL path of a collection or an object: `/apis/apps/v1/namespaces/ns/deployments/name/status`. */
export function resourcePath(
  type: ResourceType,
  at: { namespace?: string | undefined; name?: string | undefined; subresource?: string | undefined } = {},
): string {
  const root = type.apiVersion.includes('/') ? `/apis/${type.apiVersion}` : `/api/${type.apiVersion}`;
  const ns = type.namespaced && at.namespace ? `/namespaces/${encodeURIComponent(at.namespace)}` : '';
  const name = at.name !== undefined ? `/${encodeURIComponent(at.name)}` : '';
  const sub = at.name !== undefined && at.subresource ? `/${at.subresource}` : '';
  return `${root}${ns}/${type.plural}${name}${sub}`;
}

/** What names an object: a reconcile request is exactly this (controller-runtime's NamespacedName). */
export interface ObjectKey {
  /** Absent for cluster-scoped objects. */
  namespace?: string | undefined;
  name: string;
}

export function objectKey(obj: KubernetesObject): ObjectKey {
  const name = obj.metadata?.name;
  if (!name) throw new Error(`object of kind ${obj.kind ?? '?'} has no metadata.name`);
  const namespace = obj.metadata?.namespace;
  return namespace ? { namespace, name } : { name };
}

/** `namespace/name`, or `name` for cluster-scoped objects. */
export function keyString(key: ObjectKey): string {
  return key.namespace ? `${key.namespace}/${key.name}` : key.name;
}

export function keyOf(obj: KubernetesObject): string {
  return keyString(objectKey(obj));
}

export function parseKey(key: string): ObjectKey {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
