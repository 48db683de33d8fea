/**
 * OpenAPI as far as kubectl needs it. kubectl's validator downloads `/openapi/v2` (protobuf) and
 * asks `/openapi/v3/<group-version>` whether PATCH of a kind takes the `fieldValidation`
 * parameter; when it does, validation happens on the server (`fieldValidation=Strict`), which
 * is what we want. So v3 publishes every served path with its operations, parameters and
 * `x-kubernetes-group-version-kind`, and a component schema per kind: the CRD's own schema for
 * custom resources, an open object for built-ins (kubectl would otherwise compute strategic merge
 * patches from v3). v2 is in openapi-v2.ts.
 */
import { createHash } from 'node:crypto';
import type { Obj } from './json.ts';
import type { Registry } from './registry.ts';
import type { ResourceDef } from './types.ts';

/** Built-in kinds live in `io.k8s.api.<group>`; CustomResourceDefinitions in apiextensions' package. */
function builtinPackage(group: string): string {
  if (group === 'apiextensions.k8s.io') return 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions';
  return `io.k8s.api.${group ? (group.split('.')[0] ?? group) : 'core'}`;
}

/** The OpenAPI definition (v2) and component schema (v3) name of a served kind. */
export function schemaName(def: ResourceDef): string {
  if (def.builtin) return `${builtinPackage(def.group)}.${def.version}.${def.kind}`;
  return `${def.group.split('.').reverse().join('.')}.${def.version}.${def.kind}`;
}

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const LIST_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta';
const STATUS = 'io.k8s.apimachinery.pkg.apis.meta.v1.Status';

function ref(name: string): Obj {
  return { $ref: `#/components/schemas/${name}` };
}

function gvk(def: ResourceDef): Obj {
  return { group: def.group, version: def.version, kind: def.kind };
}

function q(name: string, description: string, type = 'string'): Obj {
  return { name, in: 'query', description, schema: { type, uniqueItems: true } };
}

const P = {
  pretty: q('pretty', "If 'true', then the output is pretty printed."),
  dryRun: q('dryRun', 'When present, indicates that modifications should not be persisted.'),
  fieldManager: q(
    'fieldManager',
    'fieldManager is a name associated with the actor or entity that is making these changes.',
  ),
  fieldValidation: q(
    'fieldValidation',
    'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: Ignore, Warn, Strict.',
  ),
  force: q('force', 'Force is going to "force" Apply requests.', 'boolean'),
  labelSelector: q('labelSelector', 'A selector to restrict the list of returned objects by their labels.'),
  fieldSelector: q('fieldSelector', 'A selector to restrict the list of returned objects by their fields.'),
  limit: q('limit', 'limit is a maximum number of responses to return for a list call.', 'integer'),
  cont: q('continue', 'The continue option should be set when retrieving more results from the server.'),
  resourceVersion: q(
    'resourceVersion',
    'resourceVersion sets a constraint on what resource versions a request may be served from.',
  ),
  resourceVersionMatch: q(
    'resourceVersionMatch',
    'resourceVersionMatch determines how resourceVersion is applied to list calls.',
  ),
  watch: q('watch', 'Watch for changes to the described resources.', 'boolean'),
  allowWatchBookmarks: q(
    'allowWatchBookmarks',
    'allowWatchBookmarks requests watch events with type "BOOKMARK".',
    'boolean',
  ),
  sendInitialEvents: q(
    'sendInitialEvents',
    'sendInitialEvents=true may be set together with watch=true.',
    'boolean',
  ),
  timeoutSeconds: q('timeoutSeconds', 'Timeout for the list/watch call.', 'integer'),
  gracePeriodSeconds: q(
    'gracePeriodSeconds',
    'The duration in seconds before the object should be deleted.',
    'integer',
  ),
  propagationPolicy: q(
    'propagationPolicy',
    "Whether and how garbage collection will be performed. Either 'Orphan', 'Background' or 'Foreground'.",
  ),
};

function pathParam(name: string): Obj {
  return { name, in: 'path', required: true, schema: { type: 'string', uniqueItems: true } };
}

function op(def: ResourceDef, action: string, opId: string, params: Obj[], extra: Obj = {}): Obj {
  return {
    tags: [def.group ? `${def.group.split('.')[0] ?? ''}_${def.version}` : `core_${def.version}`],
    operationId: opId,
    parameters: params,
    responses: {
      '200': { description: 'OK', content: { 'application/json': { schema: ref(schemaName(def)) } } },
      '401': { description: 'Unauthorized' },
    },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk(def),
    ...extra,
  };
}

/**
 * No `application/strategic-merge-patch+json` entry: kubectl then computes client-side
 * strategic patches from its compiled-in types, since our built-in schemas are too open to
 * compute them from. The server accepts strategic patches for built-ins all the same.
 */
const PATCH_BODY: Obj = {
  required: true,
  content: {
    'application/json-patch+json': { schema: { type: 'object' } },
    'application/merge-patch+json': { schema: { type: 'object' } },
    'application/apply-patch+yaml': { schema: { type: 'object' } },
  },
};

function pathsFor(def: ResourceDef): Record<string, Obj> {
  const base = def.group ? `/apis/${def.group}/${def.version}` : `/api/${def.version}`;
  const coll = def.namespaced ? `${base}/namespaces/{namespace}/${def.resource}` : `${base}/${def.resource}`;
  const item = `${coll}/{name}`;
  const nsParam = def.namespaced ? [pathParam('namespace')] : [];
  const id = def.kind;
  const listParams = [
    P.labelSelector,
    P.fieldSelector,
    P.limit,
    P.cont,
    P.resourceVersion,
    P.resourceVersionMatch,
    P.watch,
    P.allowWatchBookmarks,
    P.sendInitialEvents,
    P.timeoutSeconds,
  ];
  const writeParams = [P.dryRun, P.fieldManager, P.fieldValidation];
  const paths: Record<string, Obj> = {
    [coll]: {
      parameters: [...nsParam, P.pretty],
      get: op(def, 'list', `list${id}`, listParams),
      post: op(def, 'post', `create${id}`, writeParams, {
        requestBody: { required: true, content: { '*/*': { schema: ref(schemaName(def)) } } },
      }),
      delete: op(def, 'deletecollection', `deletecollection${id}`, [
        ...listParams,
        P.dryRun,
        P.gracePeriodSeconds,
        P.propagationPolicy,
      ]),
    },
    [item]: {
      parameters: [pathParam('name'), ...nsParam, P.pretty],
      get: op(def, 'get', `read${id}`, []),
      put: op(def, 'put', `replace${id}`, writeParams, {
        requestBody: { required: true, content: { '*/*': { schema: ref(schemaName(def)) } } },
      }),
      patch: op(def, 'patch', `patch${id}`, [...writeParams, P.force], { requestBody: PATCH_BODY }),
      delete: op(def, 'delete', `delete${id}`, [P.dryRun, P.gracePeriodSeconds, P.propagationPolicy]),
    },
  };
  if (def.namespaced) {
    paths[`${base}/${def.resource}`] = {
      parameters: [P.pretty],
      get: op(def, 'list', `list${id}ForAllNamespaces`, listParams),
    };
  }
  for (const sub of def.subresources) {
    if (sub === 'finalize' || sub === 'token' || sub === 'eviction') continue;
    paths[`${item}/${sub}`] = {
      parameters: [pathParam('name'), ...nsParam, P.pretty],
      get: op(def, 'get', `read${id}${sub === 'status' ? 'Status' : 'Scale'}`, []),
      put: op(def, 'put', `replace${id}${sub === 'status' ? 'Status' : 'Scale'}`, writeParams),
      patch: op(
        def,
        'patch',
        `patch${id}${sub === 'status' ? 'Status' : 'Scale'}`,
        [...writeParams, P.force],
        { requestBody: PATCH_BODY },
      ),
    };
  }
  return paths;
}

function componentSchema(def: ResourceDef): Obj {
  const properties: Obj = {
    apiVersion: {
      type: 'string',
      description: 'APIVersion defines the versioned schema of this representation of an object.',
    },
    kind: {
      type: 'string',
      description: 'Kind is a string value representing the REST resource this object represents.',
    },
    metadata: { allOf: [ref(OBJECT_META)], default: {} },
  };
  const schema = def.schema as Obj | undefined;
  if (schema) {
    const own = (schema.properties ?? {}) as Obj;
    for (const [k, v] of Object.entries(own)) if (k !== 'metadata') properties[k] = v;
    return {
      ...schema,
      type: 'object',
      properties,
      'x-kubernetes-group-version-kind': [gvk(def)],
    };
  }
  return {
    description: `${def.kind} (the emulator publishes an open schema for built-in kinds).`,
    type: 'object',
    properties,
    'x-kubernetes-preserve-unknown-fields': true,
    'x-kubernetes-group-version-kind': [gvk(def)],
  };
}

function listSchema(def: ResourceDef): Obj {
  return {
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { allOf: [ref(LIST_META)], default: {} },
      items: { type: 'array', items: { allOf: [ref(schemaName(def))], default: {} } },
    },
    'x-kubernetes-group-version-kind': [{ group: def.group, version: def.version, kind: def.listKind }],
  };
}

/** The OpenAPI v3 document of one group/version. */
export function openapiV3Doc(
  registry: Registry,
  group: string,
  version: string,
  gitVersion: string,
): Obj | undefined {
  const defs = registry.resources(group, version);
  if (defs.length === 0) return undefined;
  const paths: Record<string, Obj> = {};
  const schemas: Record<string, Obj> = {
    [OBJECT_META]: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    [LIST_META]: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    [STATUS]: {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      'x-kubernetes-group-version-kind': [{ group: '', kind: 'Status', version: 'v1' }],
    },
  };
  for (const def of defs) {
    Object.assign(paths, pathsFor(def));
    schemas[schemaName(def)] = componentSchema(def);
    schemas[`${schemaName(def)}List`] = listSchema(def);
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: gitVersion },
    paths,
    components: { schemas },
  };
}

/** `/openapi/v3`: one entry per group/version, each URL carrying a hash of its document. */
export function openapiV3Index(registry: Registry, gitVersion: string): Obj {
  const paths: Obj = {};
  const gvs: [string, string][] = [['', 'v1']];
  for (const g of registry.groups()) for (const v of g.versions) gvs.push([g.name, v]);
  for (const [group, version] of gvs) {
    const doc = openapiV3Doc(registry, group, version, gitVersion);
    if (!doc) continue;
    const p = group ? `apis/${group}/${version}` : `api/${version}`;
    const h = createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 128).toUpperCase();
    paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${h}` };
  }
  return { paths };
}
