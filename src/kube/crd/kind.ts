/**
 * A kind declared once: its root schema (from which its TypeScript type is inferred), its REST
 * mapping for the client and controllers, and the CustomResourceDefinition that serves it; and the
 * CRD as the YAML file a part ships (`crdFile`).
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { resourceType, type ResourceType } from '../resource.ts';
import { canonical, object, type OpenAPISchema, Schema, string } from './schema.ts';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

/** The scale subresource (`/scale`, autoscaling/v1 Scale): where its fields live in the object. */
export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/** The object schema of a kind: apiVersion, kind, metadata, spec and (optionally) status. */
export function kubeObject<Spec, Status = never, const SpecRequired extends boolean = true>(parts: {
  description: string;
  spec: Schema<Spec>;
  status?: Schema<Status>;
  /**
   * Whether an object without spec is refused. True for kinds whose spec has required fields:
   * such an object could never be reconciled anyway.
   */
  specRequired?: SpecRequired;
}) {
  const metadata = new Schema<V1ObjectMeta>({ type: 'object' });
  const props = {
    apiVersion: string({ description: 'The versioned schema of this representation of an object.' }),
    kind: string({ description: 'The REST resource this object represents, in CamelCase.' }),
    metadata,
    spec: parts.spec,
    ...(parts.status ? { status: parts.status } : {}),
  };
  const required = parts.specRequired === false ? [] : (['spec'] as const);
  type Root = {
    apiVersion?: string;
    kind?: string;
    metadata?: V1ObjectMeta;
    status?: Status;
  } & (SpecRequired extends false ? { spec?: Spec } : { spec: Spec });
  return object(props, { required, description: parts.description }) as unknown as Schema<Root>;
}

export interface KindDefinition<T> {
  group: string;
  version: string;
  kind: string;
  plural: string;
  scope: 'Namespaced' | 'Cluster';
  shortNames?: readonly string[];
  categories?: readonly string[];
  labels?: Readonly<Record<string, string>>;
  statusSubresource: boolean;
  scaleSubresource?: ScaleSubresource;
  printerColumns?: readonly PrinterColumn[];
  /** Served but deprecated: the API server warns every client that uses this version. */
  deprecated?: boolean;
  deprecationWarning?: string;
  schema: Schema<T>;
}

export interface Kind<T extends object> {
  readonly definition: KindDefinition<T>;
  readonly schema: Schema<T>;
  /** The REST mapping for KubeClient, caches and controllers. */
  readonly resource: ResourceType<T>;
  /** `<plural>.<group>`, the name of the CRD. */
  readonly crdName: string;
}

export function defineKind<T extends object>(def: KindDefinition<T>): Kind<T> {
  return Object.freeze({
    definition: def,
    schema: def.schema,
    resource: resourceType<T>({
      apiVersion: `${def.group}/${def.version}`,
      kind: def.kind,
      plural: def.plural,
      namespaced: def.scope === 'Namespaced',
    }),
    crdName: `${def.plural}.${def.group}`,
  });
}

/** The object type of a kind. */
export type ObjectOfKind<K> = K extends Kind<infer T> ? T : never;

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames?: string[];
      categories?: string[];
    };
    scope: 'Namespaced' | 'Cluster';
    versions: CrdVersion[];
    conversion?: CrdConversion;
  };
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema: { openAPIV3Schema: OpenAPISchema };
  subresources?: { status?: Record<string, never>; scale?: ScaleSubresource };
  additionalPrinterColumns?: PrinterColumn[];
}

/** Where the API server sends a ConversionReview: a URL, or a Service in the cluster. */
export interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  /** Base64 of the PEM CA bundle that signed the webhook's serving certificate. */
  caBundle?: string;
}

/** `spec.conversion`: `None` rewrites apiVersion only; `Webhook` asks the webhook to convert. */
export type CrdConversion =
  | { strategy: 'None' }
  | {
      strategy: 'Webhook';
      webhook: { conversionReviewVersions: string[]; clientConfig: WebhookClientConfig };
    };

export interface CrdOptions {
  /** The version objects are stored in; the first kind's when unset. */
  storageVersion?: string;
  conversion?: CrdConversion;
  /** The CRD's annotations, e.g. cert-manager's `cert-manager.io/inject-ca-from`. */
  annotations?: Readonly<Record<string, string>>;
}

/**
 * The apiextensions.k8s.io/v1 CRD that serves a kind: one version, or several versions of one
 * kind (same group, kind, plural and scope), each with its own schema, in the order given.
 */
export function customResourceDefinition(
  kinds: Kind<object> | readonly Kind<object>[],
  opts: CrdOptions = {},
): CustomResourceDefinition {
  const all: readonly Kind<object>[] = Array.isArray(kinds) ? kinds : [kinds as Kind<object>];
  const first = all[0];
  if (!first) throw new Error('a CRD needs at least one version');
  const d = first.definition;
  for (const k of all) {
    const o = k.definition;
    if (o.group !== d.group || o.kind !== d.kind || o.plural !== d.plural || o.scope !== d.scope) {
      throw new Error(`${o.kind}.${o.group}/${o.version} is not a version of ${d.kind}.${d.group}`);
    }
  }
  const storage = opts.storageVersion ?? d.version;
  if (!all.some((k) => k.definition.version === storage)) {
    throw new Error(`${first.crdName}: the storage version ${storage} is not one of its versions`);
  }
  const names: CustomResourceDefinition['spec']['names'] = {
    kind: d.kind,
    listKind: `${d.kind}List`,
    plural: d.plural,
    singular: d.kind.toLowerCase(),
  };
  if (d.shortNames?.length) names.shortNames = [...d.shortNames];
  if (d.categories?.length) names.categories = [...d.categories];
  const labels = Object.assign({}, ...all.map((k) => k.definition.labels ?? {})) as Record<string, string>;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: first.crdName,
      ...(Object.keys(labels).length ? { labels } : {}),
      ...(opts.annotations && Object.keys(opts.annotations).length
        ? { annotations: { ...opts.annotations } }
        : {}),
    },
    spec: {
      group: d.group,
      names,
      scope: d.scope,
      versions: all.map((k) => crdVersion(k.definition, k.definition.version === storage)),
      ...(opts.conversion ? { conversion: opts.conversion } : {}),
    },
  };
}

function crdVersion(d: KindDefinition<object>, storage: boolean): CrdVersion {
  const version: CrdVersion = {
    name: d.version,
    served: true,
    storage,
    schema: { openAPIV3Schema: canonical(d.schema.node) },
  };
  if (d.deprecated) version.deprecated = true;
  if (d.deprecationWarning) version.deprecationWarning = d.deprecationWarning;
  if (d.statusSubresource || d.scaleSubresource) {
    version.subresources = {
      ...(d.scaleSubresource ? { scale: { ...d.scaleSubresource } } : {}),
      ...(d.statusSubresource ? { status: {} } : {}),
    };
  }
  if (d.printerColumns?.length) version.additionalPrinterColumns = d.printerColumns.map((c) => ({ ...c }));
  return version;
}

export interface CrdFile {
  /** The file name, as controller-gen names it: `<group>_<plural>.yaml`. */
  name: string;
  text: string;
}

/** A kind's CRD as a YAML file, after `header` (a comment saying how it is generated). */
export function crdFile(
  kinds: Kind<object> | readonly Kind<object>[],
  header: string,
  opts: CrdOptions = {},
): CrdFile {
  const crd = customResourceDefinition(kinds, opts);
  // No line folding: one long description stays on one line, which is also how prettier keeps it.
  return {
    name: `${crd.spec.group}_${crd.spec.names.plural}.yaml`,
    text: header + stringify(crd, { lineWidth: 0, singleQuote: true }),
  };
}
