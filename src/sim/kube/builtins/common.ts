/**
 * What every kind shares: ObjectMeta validation (names, labels, annotations, finalizers,
 * owner references) with apimachinery's messages, the default strategy, and a builder for
 * built-in resource definitions.
 */
import { field, type FieldError } from '../errors.ts';
import { asArray, asObj, asString, deepEqual, isObj, metaOf, type Obj, scalarText } from '../json.ts';
import { METADATA_HINTS, tableHints, type HintTable } from '../patch/hints.ts';
import { AGE_COLUMN, NAME_COLUMN } from '../table.ts';
import { ALL_VERBS, type ResourceDef, type Strategy, type TableColumn } from '../types.ts';
import { cloneJson } from '../../../lib/json.ts';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export const MSG = {
  subdomain:
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  label:
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
  label1035:
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
  qualifiedName:
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
  labelValue:
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
};

export function dns1123Subdomain(path: string, v: string): FieldError[] {
  const errs: FieldError[] = [];
  if (v.length > 253) errs.push(field.invalid(path, v, 'must be no more than 253 characters'));
  if (!DNS1123_SUBDOMAIN.test(v)) errs.push(field.invalid(path, v, MSG.subdomain));
  return errs;
}

export function dns1123Label(path: string, v: string): FieldError[] {
  const errs: FieldError[] = [];
  if (v.length > 63) errs.push(field.invalid(path, v, 'must be no more than 63 characters'));
  if (!DNS1123_LABEL.test(v)) errs.push(field.invalid(path, v, MSG.label));
  return errs;
}

export function dns1035Label(path: string, v: string): FieldError[] {
  const errs: FieldError[] = [];
  if (v.length > 63) errs.push(field.invalid(path, v, 'must be no more than 63 characters'));
  if (!DNS1035_LABEL.test(v)) errs.push(field.invalid(path, v, MSG.label1035));
  return errs;
}

function pathSegment(path: string, v: string): FieldError[] {
  if (v === '.' || v === '..') return [field.invalid(path, v, `may not be '${v}'`)];
  for (const c of ['/', '%']) if (v.includes(c)) return [field.invalid(path, v, `may not contain '${c}'`)];
  return [];
}

/** A qualified name (`[prefix/]name`), as label and annotation keys and finalizers must be. */
export function qualifiedName(path: string, v: string): FieldError[] {
  const parts = v.split('/');
  let name = v;
  const errs: FieldError[] = [];
  if (parts.length === 2) {
    const [prefix = '', rest = ''] = parts;
    name = rest;
    if (!prefix) errs.push(field.invalid(path, v, 'prefix part must be non-empty'));
    else if (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix))
      errs.push(field.invalid(path, v, `prefix part ${MSG.subdomain}`));
  } else if (parts.length > 2) {
    return [
      field.invalid(
        path,
        v,
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ),
    ];
  }
  if (!name) errs.push(field.invalid(path, v, 'name part must be non-empty'));
  else if (name.length > 63)
    errs.push(field.invalid(path, v, 'name part must be no more than 63 characters'));
  else if (!QUALIFIED_NAME_PART.test(name)) errs.push(field.invalid(path, v, MSG.qualifiedName));
  return errs;
}

function validateName(rule: Strategy['nameRule'], path: string, v: string): FieldError[] {
  switch (rule) {
    case 'label':
      return dns1123Label(path, v);
    case 'label1035':
      return dns1035Label(path, v);
    case 'path':
      return pathSegment(path, v);
    default:
      return dns1123Subdomain(path, v);
  }
}

const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);
const MAX_ANNOTATIONS_BYTES = 256 * 1024;

/** `ValidateObjectMeta`: the checks every kind gets on create and update. */
export function validateObjectMeta(obj: Obj, def: ResourceDef): FieldError[] {
  const errs: FieldError[] = [];
  const m = metaOf(obj);
  const name = asString(m.name) ?? '';
  const generateName = asString(m.generateName) ?? '';
  if (!name) {
    errs.push(field.required('metadata.name', 'name or generateName is required'));
  } else {
    errs.push(...validateName(def.strategy.nameRule, 'metadata.name', name));
  }
  if (generateName && !name) {
    // generateName is validated as a prefix: the generated suffix fixes the ending.
    errs.push(
      ...validateName(def.strategy.nameRule, 'metadata.generateName', `${generateName}a`).map((e) => ({
        ...e,
        value: generateName,
      })),
    );
  }
  if (def.namespaced) {
    const ns = asString(m.namespace) ?? '';
    if (!ns) errs.push(field.required('metadata.namespace'));
    else errs.push(...dns1123Label('metadata.namespace', ns));
  } else if (asString(m.namespace)) {
    errs.push(field.forbidden('metadata.namespace', 'not allowed on this type'));
  }
  const labels = m.labels;
  if (labels !== undefined && labels !== null) {
    if (!isObj(labels)) errs.push(field.invalid('metadata.labels', labels, 'must be a map of strings'));
    else {
      for (const [k, v] of Object.entries(labels)) {
        errs.push(...qualifiedName('metadata.labels', k));
        if (typeof v !== 'string') errs.push(field.invalid('metadata.labels', v, 'must be a string'));
        else if (v.length > 63)
          errs.push(field.invalid('metadata.labels', v, 'must be no more than 63 characters'));
        else if (!LABEL_VALUE.test(v)) errs.push(field.invalid('metadata.labels', v, MSG.labelValue));
      }
    }
  }
  const annotations = m.annotations;
  if (annotations !== undefined && annotations !== null) {
    if (!isObj(annotations))
      errs.push(field.invalid('metadata.annotations', annotations, 'must be a map of strings'));
    else {
      let size = 0;
      for (const [k, v] of Object.entries(annotations)) {
        errs.push(...qualifiedName('metadata.annotations', k.toLowerCase()));
        size += k.length + (typeof v === 'string' ? v.length : 0);
      }
      if (size > MAX_ANNOTATIONS_BYTES)
        errs.push(field.tooLong('metadata.annotations', MAX_ANNOTATIONS_BYTES));
    }
  }
  const finalizers = asArray(m.finalizers) ?? [];
  finalizers.forEach((f, i) => {
    const p = `metadata.finalizers[${i}]`;
    if (typeof f !== 'string') {
      errs.push(field.invalid(p, f, 'must be a string'));
      return;
    }
    errs.push(...qualifiedName(p, f));
    // Core validation insists on qualified finalizers; apiextensions and CRs use the generic rule.
    if (
      def.builtin &&
      def.group !== 'apiextensions.k8s.io' &&
      !f.includes('/') &&
      !STANDARD_FINALIZERS.has(f)
    ) {
      errs.push(field.invalid(p, f, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  });
  const refs = asArray(m.ownerReferences) ?? [];
  let controllers = 0;
  refs.forEach((r) => {
    const ref = asObj(r) ?? {};
    const p = 'metadata.ownerReferences';
    if (!asString(ref.apiVersion))
      errs.push(
        field.invalid(`${p}.apiVersion`, asString(ref.apiVersion) ?? '', 'version must not be empty'),
      );
    if (!asString(ref.kind))
      errs.push(field.invalid(`${p}.kind`, asString(ref.kind) ?? '', 'kind must not be empty'));
    if (!asString(ref.name))
      errs.push(field.invalid(`${p}.name`, asString(ref.name) ?? '', 'name must not be empty'));
    if (!asString(ref.uid))
      errs.push(field.invalid(`${p}.uid`, asString(ref.uid) ?? '', 'uid must not be empty'));
    if (ref.controller === true) controllers++;
  });
  if (controllers > 1) {
    errs.push(
      field.invalid('metadata.ownerReferences', refs, 'Only one reference can have Controller set to true'),
    );
  }
  return errs;
}

/** `ValidateObjectMetaUpdate`: what may not change, and no new finalizers once deleting. */
export function validateObjectMetaUpdate(obj: Obj, old: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const m = metaOf(obj);
  const o = metaOf(old);
  if (o.deletionTimestamp) {
    const before = new Set(asArray(o.finalizers) ?? []);
    const added = (asArray(m.finalizers) ?? []).filter((f) => !before.has(f));
    if (added.length) {
      errs.push(
        field.forbidden(
          'metadata.finalizers',
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((a) => JSON.stringify(a)).join(', ')}}`,
        ),
      );
    }
  }
  for (const k of ['uid'] as const) {
    if (m[k] !== undefined && m[k] !== '' && !deepEqual(m[k], o[k])) {
      errs.push(field.invalid(`metadata.${k}`, m[k], 'field is immutable'));
    }
  }
  return errs;
}

export const baseStrategy: Strategy = {
  statusSubresource: false,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  returnDeletedObject: false,
  strategicMerge: true,
  nameRule: 'subdomain',
};

/** Generation follows `spec`, for kinds that keep one (deployments, daemonsets, network policies). */
export function specGeneration(obj: Obj): unknown {
  return obj.spec;
}

/** Status subresource: take the old object and keep only the new status (plus labels/annotations for built-ins). */
export function statusOnly(obj: Obj, old: Obj, keepMetaChanges: boolean): void {
  const status = obj.status;
  const newMeta = metaOf(obj);
  for (const k of Object.keys(obj)) delete obj[k];
  Object.assign(obj, cloneJson(old));
  if (status === undefined) delete obj.status;
  else obj.status = status;
  const m = obj.metadata as Obj;
  // managedFields were already computed for this request (apply), or come from the client.
  if (newMeta.managedFields === undefined) delete m.managedFields;
  else m.managedFields = newMeta.managedFields;
  if (keepMetaChanges) {
    for (const k of ['labels', 'annotations'] as const) {
      if (newMeta[k] === undefined) delete m[k];
      else m[k] = newMeta[k];
    }
  }
}

/** Main resource with a status subresource: status changes are ignored. */
export function keepOldStatus(obj: Obj, old: Obj): void {
  if (old.status === undefined) delete obj.status;
  else obj.status = cloneJson(old.status);
}

/**
 * The update hooks of a built-in kind with a status subresource and no other update rules (Node,
 * Pod): the main resource keeps the stored status; `/status` takes status, labels and annotations.
 */
export const STATUS_SUBRESOURCE_HOOKS: Pick<Strategy, 'prepareForUpdate' | 'prepareForStatusUpdate'> = {
  prepareForUpdate(_ctx, obj, old) {
    keepOldStatus(obj, old);
  },
  prepareForStatusUpdate(_ctx, obj, old) {
    statusOnly(obj, old, true);
  },
};

export interface BuiltinSpec {
  group?: string;
  version?: string;
  resource: string;
  kind: string;
  singular?: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  verbs?: string[];
  subresources?: string[];
  storageKey?: string;
  strategy?: Partial<Strategy>;
  hints?: HintTable;
  /** Extra field-selector labels beyond metadata.name/metadata.namespace. */
  fields?: Record<string, (o: Obj) => string>;
  columns?: TableColumn[];
  /** Columns that replace the default Name … Age layout entirely (events have no Name first). */
  fullColumns?: TableColumn[];
  toStorage?: ResourceDef['toStorage'];
  fromStorage?: ResourceDef['fromStorage'];
  scale?: ResourceDef['scale'];
}

export function builtin(spec: BuiltinSpec): ResourceDef {
  const group = spec.group ?? '';
  const fields = spec.fields ?? {};
  const base = spec.namespaced ? ['metadata.name', 'metadata.namespace'] : ['metadata.name'];
  const supported = new Set([...base, ...Object.keys(fields)]);
  return {
    group,
    version: spec.version ?? 'v1',
    resource: spec.resource,
    kind: spec.kind,
    listKind: `${spec.kind}List`,
    singular: spec.singular ?? spec.kind.toLowerCase(),
    namespaced: spec.namespaced,
    shortNames: spec.shortNames ?? [],
    categories: spec.categories ?? [],
    verbs: spec.verbs ?? ALL_VERBS,
    subresources: spec.subresources ?? [],
    storageKey: spec.storageKey ?? `${group}/${spec.resource}`,
    builtin: true,
    strategy: { ...baseStrategy, ...spec.strategy },
    hints: tableHints(METADATA_HINTS, spec.hints ?? {}),
    fieldLabels(o) {
      const m = metaOf(o);
      const out: Record<string, string> = { 'metadata.name': asString(m.name) ?? '' };
      if (spec.namespaced) out['metadata.namespace'] = asString(m.namespace) ?? '';
      for (const [k, f] of Object.entries(fields)) out[k] = f(o);
      return out;
    },
    supportedFields: supported,
    columns: spec.fullColumns ?? [
      NAME_COLUMN,
      ...(spec.columns ?? []),
      ...(spec.columns?.some((c) => c.name === 'Age') ? [] : [AGE_COLUMN]),
    ],
    ...(spec.toStorage ? { toStorage: spec.toStorage } : {}),
    ...(spec.fromStorage ? { fromStorage: spec.fromStorage } : {}),
    ...(spec.scale ? { scale: spec.scale } : {}),
  };
}

/** String of a nested value for field selectors (`spec.nodeName`), '' when absent. */
export function str(...path: string[]): (o: Obj) => string {
  return (o) => {
    let cur: unknown = o;
    for (const p of path) cur = asObj(cur)?.[p];
    return scalarText(cur);
  };
}
