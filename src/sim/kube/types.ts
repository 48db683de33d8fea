/**
 * The shapes every part of the Kubernetes emulator shares: a served resource (one
 * group/version/resource with its kind, scope, verbs and subresources) and the per-kind strategy
 * that carries the rules the real registry's `rest.RESTCreateStrategy`/`RESTUpdateStrategy`
 * implement (defaults, status reset, generation, validation, allocation).
 */
import type { WebhookConversionConfig } from './conversion-webhook.ts';
import type { FieldError } from './errors.ts';
import type { Obj } from './json.ts';
import type { Hints } from './patch/hints.ts';
import type { JSONSchema } from './schema.ts';

/** What a strategy may ask of the emulator while preparing or validating a write. */
export interface StrategyContext {
  /** ISO time of this request, shared by every field it stamps. */
  now: string;
  dryRun: boolean;
  /** A stored object of another resource (e.g. the namespace of a new object). */
  lookup(group: string, resource: string, namespace: string, name: string): Obj | undefined;
  /** Service ClusterIP and NodePort allocators, and anything else a strategy keeps across writes. */
  services: ServiceAllocator;
  /** Pruned-field warnings for `fieldValidation=Warn`, or the reason for a Strict failure. */
  unknownFields: string[];
}

/** Allocates and releases service ClusterIPs and NodePorts; errors are field errors. */
export interface ServiceAllocator {
  /** Allocates what `svc` needs given `old` (undefined on create); returns field errors, allocates nothing then. */
  allocate(svc: Obj, old: Obj | undefined, dryRun: boolean): FieldError[];
  release(svc: Obj): void;
  /** Rebuilds allocation state from stored services (after a restore). */
  rebuild(services: Iterable<Obj>): void;
}

export interface Strategy {
  /**
   * The part of an object whose change bumps `metadata.generation`, or undefined when the kind
   * keeps no generation (ConfigMap, Pod in 1.32, Service, …).
   */
  generationOf?(obj: Obj): unknown;
  /** Has a `/status` subresource: the main resource ignores status, `/status` ignores the rest. */
  statusSubresource: boolean;
  allowCreateOnUpdate: boolean;
  allowUnconditionalUpdate: boolean;
  /** DELETE answers with the object (true) or a Status of kind Success (false). */
  returnDeletedObject: boolean;
  /** Strategic merge patch is accepted (built-in kinds; never custom resources). */
  strategicMerge: boolean;
  /** Name validation: DNS-1123 subdomain (most kinds), label (namespaces), DNS-1035 label (services), or path segment (CRs). */
  nameRule: 'subdomain' | 'label' | 'label1035' | 'path';
  prepareForCreate?(ctx: StrategyContext, obj: Obj): void;
  prepareForUpdate?(ctx: StrategyContext, obj: Obj, old: Obj): void;
  /** Status-subresource update: start from old, take the new status (and what else the kind allows). */
  prepareForStatusUpdate?(ctx: StrategyContext, obj: Obj, old: Obj): void;
  validate?(ctx: StrategyContext, obj: Obj): FieldError[];
  /** Checks on create only (events.k8s.io/v1's strict rules for new Events). */
  validateCreate?(ctx: StrategyContext, obj: Obj): FieldError[];
  validateUpdate?(ctx: StrategyContext, obj: Obj, old: Obj): FieldError[];
  /** Allocation after validation (services); field errors reject the write. */
  allocate?(ctx: StrategyContext, obj: Obj, old: Obj | undefined): FieldError[];
  release?(ctx: StrategyContext, obj: Obj): void;
  /**
   * Deletion that does not remove the object at once (namespaces: phase Terminating until the
   * namespace controller has emptied them): returns the object to store, or undefined to go on.
   */
  gracefulDelete?(ctx: StrategyContext, obj: Obj): Obj | undefined;
}

export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description: string;
  priority: number;
  cell(obj: Obj, now: number): unknown;
}

export interface ResourceDef {
  group: string;
  version: string;
  /** Plural, lowercase: `pods`. */
  resource: string;
  kind: string;
  listKind: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  verbs: string[];
  /** Served subresources: `status`, `finalize`, `scale`. */
  subresources: string[];
  /** Storage shared by every version (and, for events, both groups): `group/resource`. */
  storageKey: string;
  /** Built-in typed lists omit `kind`/`apiVersion` on items; custom resources keep them. */
  builtin: boolean;
  strategy: Strategy;
  hints: Hints;
  /** Field-selector labels this resource indexes, and their values for an object. */
  fieldLabels(obj: Obj): Record<string, string>;
  supportedFields: ReadonlySet<string>;
  columns: TableColumn[];
  /** Converts between this version's wire form and the storage form (events.k8s.io ↔ core). */
  toStorage?(obj: Obj): Obj;
  fromStorage?(obj: Obj): Obj;
  /** Custom resources: the version's schema, for validation, OpenAPI and apply. */
  schema?: JSONSchema;
  /** The CRD name that serves this resource. */
  crd?: string;
  /**
   * A CRD with `spec.conversion.strategy: Webhook`: objects keep the apiVersion they were written
   * in, and whatever must change version goes through the webhook (see conversion.ts).
   */
  webhookConversion?: WebhookConversion;
  /** Scale subresource paths (CRDs and deployments). */
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  /**
   * A review (TokenReview, SubjectAccessReview): a create answered with the object and its
   * status, never stored.
   */
  review?(obj: Obj): Obj;
}

export interface WebhookConversion {
  config: WebhookConversionConfig;
  storageVersion: string;
  /** Every version's schema: what a converted object is pruned against. */
  schemas: Record<string, JSONSchema>;
}

export function apiVersionOf(def: Pick<ResourceDef, 'group' | 'version'>): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

export function groupResource(def: Pick<ResourceDef, 'group' | 'resource'>): {
  group: string;
  resource: string;
} {
  return { group: def.group, resource: def.resource };
}

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
