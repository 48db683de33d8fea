/**
 * CustomResourceDefinitions: the apiextensions.k8s.io/v1 resource itself (defaults, validation
 * of names, scope, versions and structural schemas) and the resources a CRD serves — one
 * definition per served version, namespaced or cluster-scoped, with `/status` and `/scale`
 * when declared, schema pruning, defaulting and validation on every write, printer columns and
 * selectable fields.
 */
import { builtin, dns1035Label, keepOldStatus, statusOnly } from './builtins/common.ts';
import { field, type FieldError } from './errors.ts';
import { asArray, asObj, asString, deepEqual, isObj, meta, metaOf, stringList, type Obj } from './json.ts';
import { columnPath, goText } from './jsonpath.ts';
import { CONDITIONS, METADATA_HINTS, tableHints } from './patch/hints.ts';
import { applyDefaults, prune, schemaHints, validate, type JSONSchema } from './schema.ts';
import { AGE_COLUMN, col, humanDuration, NAME_COLUMN } from './table.ts';
import {
  ALL_VERBS,
  type ResourceDef,
  type Strategy,
  type StrategyContext,
  type TableColumn,
  type WebhookConversion,
} from './types.ts';

export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

/**
 * The apiextensions table convertor's cell: a string column prints the first value as Go's `%v`
 * does (`cellForJSONValue` otherwise); dates become ages, numbers keep their type.
 */
function cellOf(type: string, v: unknown, now: number): unknown {
  if (v === undefined) return null;
  if (type === 'string') return goText(v);
  if (v === null) return null;
  if (type === 'date') {
    if (typeof v !== 'string') return null;
    const t = Date.parse(v);
    return Number.isNaN(t) ? '<invalid>' : humanDuration(now - t);
  }
  if (type === 'integer') return typeof v === 'number' ? Math.trunc(v) : null;
  if (type === 'number') return typeof v === 'number' ? v : null;
  if (type === 'boolean') return typeof v === 'boolean' ? v : null;
  return null;
}

function versionsOf(crd: Obj): Obj[] {
  return (asArray(asObj(crd.spec)?.versions) ?? []).map(asObj).filter((v): v is Obj => !!v);
}

export function storageVersionOf(crd: Obj): string | undefined {
  return asString(versionsOf(crd).find((v) => v.storage === true)?.name);
}

function schemaOf(version: Obj): JSONSchema | undefined {
  const s = asObj(asObj(version.schema)?.openAPIV3Schema);
  return s;
}

/* ------------------------------------------------------------ CRD validation */

function validateSchemaNode(
  s: unknown,
  path: string,
  errs: FieldError[],
  depth: number,
  root: boolean,
): void {
  if (depth > 32 || !isObj(s)) return;
  const node = s as JSONSchema;
  const special =
    node['x-kubernetes-preserve-unknown-fields'] === true || node['x-kubernetes-int-or-string'] === true;
  if (!node.type && !special) {
    errs.push(
      field.required(
        `${path}.type`,
        root ? 'must not be empty at the root' : 'must not be empty for specified object fields',
      ),
    );
  }
  if (root && node.type && node.type !== 'object')
    errs.push(field.invalid(`${path}.type`, node.type, 'must be object at the root'));
  if (node.properties && isObj(node.additionalProperties)) {
    errs.push(
      field.forbidden(
        `${path}.additionalProperties`,
        'additionalProperties and properties are mutual exclusive',
      ),
    );
  }
  if (node.type === 'array' && !node.items) errs.push(field.required(`${path}.items`, 'must be specified'));
  for (const [k, v] of Object.entries(node.properties ?? {}))
    validateSchemaNode(v, `${path}.properties[${k}]`, errs, depth + 1, false);
  if (node.items) validateSchemaNode(node.items, `${path}.items`, errs, depth + 1, false);
  if (isObj(node.additionalProperties))
    validateSchemaNode(node.additionalProperties, `${path}.additionalProperties`, errs, depth + 1, false);
  if (node.default !== undefined && root)
    errs.push(field.forbidden(`${path}.default`, 'must not be set at the root'));
}

function validateCRD(obj: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const spec = asObj(obj.spec) ?? {};
  const group = asString(spec.group) ?? '';
  const names = asObj(spec.names) ?? {};
  const plural = asString(names.plural) ?? '';
  const kind = asString(names.kind) ?? '';
  if (!group) errs.push(field.required('spec.group'));
  else if (!group.includes('.'))
    errs.push(field.invalid('spec.group', group, 'should be a domain with at least one dot'));
  if (!plural) errs.push(field.required('spec.names.plural'));
  else errs.push(...dns1035Label('spec.names.plural', plural));
  if (!kind) errs.push(field.required('spec.names.kind'));
  if (plural && group && asString(metaOf(obj).name) !== `${plural}.${group}`) {
    errs.push(field.invalid('metadata.name', metaOf(obj).name, 'must be spec.names.plural+"."+spec.group'));
  }
  const scope = asString(spec.scope) ?? '';
  if (scope !== 'Namespaced' && scope !== 'Cluster')
    errs.push(field.notSupported('spec.scope', scope, ['Cluster', 'Namespaced']));
  validateConversion(spec, errs);
  const versions = versionsOf(obj);
  if (versions.length === 0)
    errs.push(field.invalid('spec.versions', [], 'must have exactly one version marked as storage version'));
  const seen = new Set<string>();
  let storage = 0;
  versions.forEach((v, i) => {
    const p = `spec.versions[${i}]`;
    const name = asString(v.name) ?? '';
    if (!name) errs.push(field.required(`${p}.name`));
    else {
      errs.push(...dns1035Label(`${p}.name`, name));
      if (seen.has(name))
        errs.push(field.invalid('spec.versions', versions, 'must contain unique version names'));
      seen.add(name);
    }
    if (v.storage === true) storage++;
    const schema = schemaOf(v);
    if (!schema) errs.push(field.required(`${p}.schema.openAPIV3Schema`, 'schemas are required'));
    else validateSchemaNode(schema, `${p}.schema.openAPIV3Schema`, errs, 0, true);
  });
  if (versions.length && storage !== 1) {
    errs.push(
      field.invalid(
        'spec.versions',
        versions.map((v) => v.name),
        'must have exactly one version marked as storage version',
      ),
    );
  }
  if (versions.length && !versions.some((v) => v.served === true)) {
    errs.push(
      field.invalid(
        'spec.versions',
        versions.map((v) => v.name),
        'must have at least one version marked as served',
      ),
    );
  }
  return errs;
}

function defaultCRD(obj: Obj): void {
  const spec = asObj(obj.spec) ?? {};
  obj.spec = spec;
  const names = asObj(spec.names) ?? {};
  spec.names = names;
  const kind = asString(names.kind) ?? '';
  names.singular ??= kind.toLowerCase();
  names.listKind ??= `${kind}List`;
  spec.conversion ??= { strategy: 'None' };
}

function establishedStatus(obj: Obj, now: string): Obj {
  const spec = asObj(obj.spec) ?? {};
  const names = structuredClone(asObj(spec.names) ?? {});
  const status = structuredClone(asObj(obj.status) ?? {});
  const stored = stringList(status.storedVersions);
  const sv = storageVersionOf(obj);
  if (sv && !stored.includes(sv)) stored.push(sv);
  const cond = (type: string, reason: string, message: string) => ({
    type,
    status: 'True',
    lastTransitionTime: now,
    reason,
    message,
  });
  const prev = (asArray(status.conditions) ?? []).map(asObj).filter((c): c is Obj => !!c);
  const keep = (c: Obj) => {
    const old = prev.find((p) => p.type === c.type && p.status === c.status);
    return old ? { ...c, lastTransitionTime: old.lastTransitionTime } : c;
  };
  return {
    acceptedNames: names,
    conditions: [
      keep(cond('NamesAccepted', 'NoConflicts', 'no conflicts found')),
      keep(cond('Established', 'InitialNamesAccepted', 'the initial names have been accepted')),
    ],
    storedVersions: stored,
  };
}

/** The status the CRD controllers (naming, establishing) converge a CRD to; undefined when already there. */
export function crdStatusUpdate(crd: Obj, now: string): Obj | undefined {
  if (metaOf(crd).deletionTimestamp) return undefined;
  const next = establishedStatus(crd, now);
  const cur = asObj(crd.status) ?? {};
  if (deepEqual(next, cur)) return undefined;
  return next;
}

export const customresourcedefinitions: ResourceDef = builtin({
  group: 'apiextensions.k8s.io',
  resource: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  subresources: ['status'],
  hints: { 'status.conditions': CONDITIONS },
  fullColumns: [
    NAME_COLUMN,
    col('Created At', (o) => metaOf(o).creationTimestamp ?? null, {
      type: 'date',
      description: 'Created At',
    }),
  ],
  strategy: {
    statusSubresource: true,
    returnDeletedObject: true,
    generationOf: (o) => o.spec,
    prepareForCreate(_ctx, obj) {
      defaultCRD(obj);
      const sv = storageVersionOf(obj);
      obj.status = { acceptedNames: { kind: '', plural: '' }, storedVersions: sv ? [sv] : [] };
      const m = meta(obj);
      const fin = stringList(m.finalizers);
      if (!fin.includes(CRD_CLEANUP_FINALIZER)) m.finalizers = [...fin, CRD_CLEANUP_FINALIZER];
    },
    prepareForUpdate(_ctx, obj, old) {
      keepOldStatus(obj, old);
      defaultCRD(obj);
    },
    prepareForStatusUpdate(_ctx, obj, old) {
      statusOnly(obj, old, false);
    },
    validate: (_ctx, obj) => validateCRD(obj),
    validateUpdate(_ctx, obj, old) {
      const errs: FieldError[] = [];
      if (asString(asObj(obj.spec)?.scope) !== asString(asObj(old.spec)?.scope)) {
        errs.push(field.invalid('spec.scope', asObj(obj.spec)?.scope, 'field is immutable'));
      }
      if (asString(asObj(obj.spec)?.group) !== asString(asObj(old.spec)?.group)) {
        errs.push(field.invalid('spec.group', asObj(obj.spec)?.group, 'field is immutable'));
      }
      return errs;
    },
  },
});

/* --------------------------------------------------- resources served by CRDs */

function crStrategy(schema: JSONSchema, hasStatus: boolean): Strategy {
  const normalise = (ctx: StrategyContext, obj: Obj) => {
    const pruned = prune(schema, obj);
    ctx.unknownFields.push(...pruned);
    applyDefaults(schema, obj);
  };
  return {
    statusSubresource: hasStatus,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    returnDeletedObject: true,
    strategicMerge: false,
    nameRule: 'subdomain',
    generationOf(obj) {
      const { metadata: _m, status, ...rest } = obj;
      return hasStatus ? rest : { ...rest, status };
    },
    prepareForCreate(ctx, obj) {
      if (hasStatus) delete obj.status;
      normalise(ctx, obj);
    },
    prepareForUpdate(ctx, obj, old) {
      if (hasStatus) keepOldStatus(obj, old);
      normalise(ctx, obj);
    },
    prepareForStatusUpdate(ctx, obj, old) {
      statusOnly(obj, old, false);
      normalise(ctx, obj);
    },
    validate: (_ctx, obj) => validateCustomResource(schema, obj),
  };
}

function validateCustomResource(schema: JSONSchema, obj: Obj): FieldError[] {
  const { metadata: _m, ...body } = obj;
  return validate(schema, body);
}

function printerColumns(version: Obj): TableColumn[] {
  const cols = (asArray(version.additionalPrinterColumns) ?? []).map(asObj).filter((c): c is Obj => !!c);
  if (cols.length === 0) {
    return [
      NAME_COLUMN,
      { ...AGE_COLUMN, type: 'date', cell: (o, now) => cellOf('date', metaOf(o).creationTimestamp, now) },
    ];
  }
  return [
    NAME_COLUMN,
    ...cols.map((c) => {
      const t = asString(c.type) ?? 'string';
      const path = asString(c.jsonPath) ?? '';
      const value = columnPath(path);
      const column: TableColumn = {
        name: asString(c.name) ?? path,
        type: (['integer', 'number', 'boolean', 'date'].includes(t) ? t : 'string') as TableColumn['type'],
        description:
          asString(c.description) ?? `Custom resource definition column (in JSONPath format): ${path}`,
        priority: typeof c.priority === 'number' ? c.priority : 0,
        cell: (o, now) => cellOf(t, value(o), now),
      };
      const format = asString(c.format);
      if (format) column.format = format;
      return column;
    }),
  ];
}

/** One served version of a CRD as a resource definition. */
export function crResourceDef(crd: Obj, version: Obj): ResourceDef {
  const spec = asObj(crd.spec) ?? {};
  const names = asObj(spec.names) ?? {};
  const group = asString(spec.group) ?? '';
  const plural = asString(names.plural) ?? '';
  const kind = asString(names.kind) ?? '';
  const namespaced = asString(spec.scope) !== 'Cluster';
  const schema = schemaOf(version) ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const subs = asObj(version.subresources) ?? {};
  const hasStatus = subs.status !== undefined;
  const scale = asObj(subs.scale);
  const versionName = asString(version.name) ?? '';
  const storageVersion = storageVersionOf(crd) ?? versionName;
  const webhook = webhookConversionOf(crd);
  const selectable = (asArray(version.selectableFields) ?? [])
    .map((f) => asString(asObj(f)?.jsonPath))
    .filter((p): p is string => !!p)
    .map((p) => ({ label: p.replace(/^\./, ''), value: columnPath(p) }));
  const baseFields = namespaced ? ['metadata.name', 'metadata.namespace'] : ['metadata.name'];
  const fieldNames = [...baseFields, ...selectable.map((f) => f.label)];
  return {
    group,
    version: versionName,
    resource: plural,
    kind,
    listKind: asString(names.listKind) ?? `${kind}List`,
    singular: asString(names.singular) ?? kind.toLowerCase(),
    namespaced,
    shortNames: stringList(names.shortNames),
    categories: stringList(names.categories),
    verbs: ALL_VERBS,
    subresources: [...(hasStatus ? ['status'] : []), ...(scale ? ['scale'] : [])],
    storageKey: `${group}/${plural}`,
    builtin: false,
    strategy: crStrategy(schema, hasStatus),
    hints: schemaHints(schema, tableHints(METADATA_HINTS)),
    fieldLabels(o) {
      const out: Record<string, string> = { 'metadata.name': asString(metaOf(o).name) ?? '' };
      if (namespaced) out['metadata.namespace'] = asString(metaOf(o).namespace) ?? '';
      // The apiextensions strategy's field set: `%v` of the value, '' when absent or null.
      for (const f of selectable) {
        const v = f.value(o);
        out[f.label] = v === undefined || v === null ? '' : goText(v);
      }
      return out;
    },
    supportedFields: new Set(fieldNames),
    columns: printerColumns(version),
    // Strategy None rewrites apiVersion both ways; a webhook converts (conversion.ts) and an
    // object keeps the apiVersion it was stored in.
    ...(webhook
      ? { webhookConversion: webhook }
      : {
          toStorage: (o: Obj) => ({ ...o, apiVersion: `${group}/${storageVersion}` }),
          fromStorage: (o: Obj) => ({ ...o, apiVersion: `${group}/${versionName}` }),
        }),
    schema,
    crd: asString(metaOf(crd).name) ?? '',
    ...(scale
      ? {
          scale: {
            specReplicasPath: asString(scale.specReplicasPath) ?? '.spec.replicas',
            statusReplicasPath: asString(scale.statusReplicasPath) ?? '.status.replicas',
            ...(asString(scale.labelSelectorPath)
              ? { labelSelectorPath: asString(scale.labelSelectorPath) as string }
              : {}),
          },
        }
      : {}),
  };
}

/** `spec.conversion` of strategy Webhook as what the emulator calls, or undefined (strategy None). */
export function webhookConversionOf(crd: Obj): WebhookConversion | undefined {
  const conversion = asObj(asObj(crd.spec)?.conversion);
  if (asString(conversion?.strategy) !== 'Webhook') return undefined;
  const webhook = asObj(conversion?.webhook) ?? {};
  const client = asObj(webhook.clientConfig) ?? {};
  const svc = asObj(client.service);
  const ca = asString(client.caBundle);
  const schemas: Record<string, JSONSchema> = {};
  for (const v of versionsOf(crd)) {
    const name = asString(v.name);
    const schema = schemaOf(v);
    if (name && schema) schemas[name] = schema;
  }
  return {
    config: {
      crd: asString(metaOf(crd).name) ?? '',
      ...(asString(client.url) ? { url: asString(client.url) } : {}),
      ...(svc
        ? {
            service: {
              namespace: asString(svc.namespace) ?? '',
              name: asString(svc.name) ?? '',
              port: typeof svc.port === 'number' ? svc.port : 443,
              ...(asString(svc.path) ? { path: asString(svc.path) as string } : {}),
            },
          }
        : {}),
      ...(ca ? { caPem: Buffer.from(ca, 'base64').toString('utf8') } : {}),
      conversionReviewVersions: stringList(webhook.conversionReviewVersions),
    },
    storageVersion: storageVersionOf(crd) ?? '',
    schemas,
  };
}

/** apiextensions' validation of `spec.conversion`. */
function validateConversion(spec: Obj, errs: FieldError[]): void {
  const conversion = asObj(spec.conversion);
  if (!conversion) return;
  const strategy = asString(conversion.strategy) ?? '';
  if (strategy !== 'None' && strategy !== 'Webhook') {
    errs.push(field.notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook']));
    return;
  }
  const webhook = asObj(conversion.webhook);
  if (strategy === 'None') {
    if (webhook)
      errs.push(
        field.forbidden('spec.conversion.webhook', 'should not be set when strategy is not set to Webhook'),
      );
    return;
  }
  if (!webhook) {
    errs.push(field.required('spec.conversion.webhook', 'required when strategy is set to Webhook'));
    return;
  }
  const client = asObj(webhook.clientConfig);
  if (!client)
    errs.push(
      field.required('spec.conversion.webhook.clientConfig', 'required when strategy is set to Webhook'),
    );
  else {
    const url = asString(client.url);
    const svc = asObj(client.service);
    if (!url === !svc)
      errs.push(
        field.required('spec.conversion.webhook.clientConfig', 'exactly one of url or service is required'),
      );
    if (url && !url.startsWith('https://'))
      errs.push(
        field.invalid(
          'spec.conversion.webhook.clientConfig.url',
          url,
          "'https' is the only allowed URL scheme",
        ),
      );
  }
  const reviews = stringList(webhook.conversionReviewVersions);
  if (!reviews.includes('v1') && !reviews.includes('v1beta1')) {
    errs.push(
      field.invalid(
        'spec.conversion.webhook.conversionReviewVersions',
        reviews,
        'must include at least one of v1, v1beta1',
      ),
    );
  }
}

/** Served versions of a CRD as resource definitions (none while it is being deleted). */
export function crResourceDefs(crd: Obj): ResourceDef[] {
  return versionsOf(crd)
    .filter((v) => v.served === true)
    .map((v) => crResourceDef(crd, v));
}
