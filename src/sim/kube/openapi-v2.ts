/**
 * The OpenAPI v2 document (`/openapi/v2`), which kubectl reads for client-side validation of
 * `kind: List` files and for strategic merge patches of built-in kinds in `kubectl apply`.
 * Built-in kinds get their definitions from the protobuf schema table (every field, typed, with
 * the patch strategies of the Go struct tags), custom resources the CRD's structural schema
 * converted to v2 as the apiextensions server does it; each kind carries
 * `x-kubernetes-group-version-kind`. Paths are not published: no client reads them from v2.
 */
import { createHash } from 'node:crypto';
import { asObj, isObj, type Obj } from './json.ts';
import { schemaName } from './openapi.ts';
import { kindMessages, messageDef, messageForKind, messageNames, type FieldType } from './protobuf/schema.ts';
import type { Registry } from './registry.ts';
import { apiVersionOf, type ResourceDef } from './types.ts';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const OBJECT_META = `${META}.ObjectMeta`;
const LIST_META = `${META}.ListMeta`;

/** Schema-table package → OpenAPI definition prefix. */
const PACKAGES: Record<string, string> = {
  meta: META,
  core: 'io.k8s.api.core.v1',
  apps: 'io.k8s.api.apps.v1',
  batch: 'io.k8s.api.batch.v1',
  rbac: 'io.k8s.api.rbac.v1',
  policy: 'io.k8s.api.policy.v1',
  networking: 'io.k8s.api.networking.v1',
  scheduling: 'io.k8s.api.scheduling.v1',
  authentication: 'io.k8s.api.authentication.v1',
  coordination: 'io.k8s.api.coordination.v1',
  discovery: 'io.k8s.api.discovery.v1',
  events: 'io.k8s.api.events.v1',
};

/** The apimachinery types with a JSON form of their own, as the real document defines them. */
const SPECIAL_DEFS: Record<string, [string, Obj]> = {
  Time: [`${META}.Time`, { type: 'string', format: 'date-time' }],
  MicroTime: [`${META}.MicroTime`, { type: 'string', format: 'date-time' }],
  Duration: [`${META}.Duration`, { type: 'string' }],
  IntOrString: [
    'io.k8s.apimachinery.pkg.util.intstr.IntOrString',
    { type: 'string', format: 'int-or-string' },
  ],
  Quantity: ['io.k8s.apimachinery.pkg.api.resource.Quantity', { type: 'string' }],
  Raw: ['io.k8s.apimachinery.pkg.runtime.RawExtension', { type: 'object' }],
  FieldsV1: [`${META}.FieldsV1`, { type: 'object' }],
};

/**
 * `patchStrategy`/`patchMergeKey` struct tags of the fields in the schema table (as compiled
 * into kubectl 1.33): kubectl's strategic merge patches from this document merge these lists by
 * key, as they would from its compiled-in types.
 */
const PATCH: Record<string, [string, string?]> = {
  'apps.DaemonSetStatus.conditions': ['merge', 'type'],
  'apps.DeploymentSpec.strategy': ['retainKeys'],
  'apps.DeploymentStatus.conditions': ['merge', 'type'],
  'batch.JobStatus.conditions': ['merge', 'type'],
  'core.Container.env': ['merge', 'name'],
  'core.Container.ports': ['merge', 'containerPort'],
  'core.Container.volumeDevices': ['merge', 'devicePath'],
  'core.Container.volumeMounts': ['merge', 'mountPath'],
  'core.ContainerStatus.allocatedResourcesStatus': ['merge', 'name'],
  'core.ContainerStatus.volumeMounts': ['merge', 'mountPath'],
  'core.EphemeralContainerCommon.env': ['merge', 'name'],
  'core.EphemeralContainerCommon.ports': ['merge', 'containerPort'],
  'core.EphemeralContainerCommon.volumeDevices': ['merge', 'devicePath'],
  'core.EphemeralContainerCommon.volumeMounts': ['merge', 'mountPath'],
  'core.NamespaceStatus.conditions': ['merge', 'type'],
  'core.NodeSpec.podCIDRs': ['merge'],
  'core.NodeStatus.addresses': ['merge', 'type'],
  'core.NodeStatus.conditions': ['merge', 'type'],
  'core.PodSpec.containers': ['merge', 'name'],
  'core.PodSpec.ephemeralContainers': ['merge', 'name'],
  'core.PodSpec.hostAliases': ['merge', 'ip'],
  'core.PodSpec.imagePullSecrets': ['merge', 'name'],
  'core.PodSpec.initContainers': ['merge', 'name'],
  'core.PodSpec.resourceClaims': ['merge,retainKeys', 'name'],
  'core.PodSpec.schedulingGates': ['merge', 'name'],
  'core.PodSpec.topologySpreadConstraints': ['merge', 'topologyKey'],
  'core.PodSpec.volumes': ['merge,retainKeys', 'name'],
  'core.PodStatus.conditions': ['merge', 'type'],
  'core.PodStatus.hostIPs': ['merge', 'ip'],
  'core.PodStatus.podIPs': ['merge', 'ip'],
  'core.PodStatus.resourceClaimStatuses': ['merge,retainKeys', 'name'],
  'core.ServiceAccount.secrets': ['merge', 'name'],
  'core.ServiceSpec.ports': ['merge', 'port'],
  'core.ServiceStatus.conditions': ['merge', 'type'],
  'meta.ObjectMeta.finalizers': ['merge'],
  'meta.ObjectMeta.ownerReferences': ['merge', 'uid'],
  'policy.PodDisruptionBudgetSpec.selector': ['replace'],
  'policy.PodDisruptionBudgetStatus.conditions': ['merge', 'type'],
};

function definitionName(message: string): string {
  const dot = message.indexOf('.');
  return `${PACKAGES[message.slice(0, dot)] ?? message.slice(0, dot)}.${message.slice(dot + 1)}`;
}

function ref(name: string): Obj {
  return { $ref: `#/definitions/${name}` };
}

function typeSchema(t: FieldType): Obj {
  switch (t.kind) {
    case 'scalar':
      switch (t.scalar) {
        case 'string':
          return { type: 'string' };
        case 'bool':
          return { type: 'boolean' };
        case 'int32':
          return { type: 'integer', format: 'int32' };
        case 'int64':
          return { type: 'integer', format: 'int64' };
        case 'double':
          return { type: 'number', format: 'double' };
        case 'bytes':
          return { type: 'string', format: 'byte' };
      }
      break;
    case 'special':
      return ref((SPECIAL_DEFS[t.special] as [string, Obj])[0]);
    case 'message':
      return ref(definitionName(t.message));
    case 'map':
      return { type: 'object', additionalProperties: typeSchema(t.value) };
  }
  return {};
}

/** A message's properties, embedded (`json:",inline"`) structs flattened into them. */
function messageProperties(message: string, depth = 0): Obj {
  const props: Obj = {};
  for (const f of messageDef(message).values()) {
    if (f.name === undefined) {
      if (f.type.kind === 'message' && depth < 8)
        Object.assign(props, messageProperties(f.type.message, depth + 1));
      continue;
    }
    let schema = typeSchema(f.type);
    if (f.repeated) schema = { type: 'array', items: schema };
    const patch = PATCH[`${message}.${f.name}`];
    if (patch) {
      schema['x-kubernetes-patch-strategy'] = patch[0];
      if (patch[1]) schema['x-kubernetes-patch-merge-key'] = patch[1];
    }
    props[f.name] = schema;
  }
  return props;
}

function gvkOf(def: Pick<ResourceDef, 'group' | 'version'>, kind: string): Obj {
  return { group: def.group, kind, version: def.version };
}

let builtinCache: Record<string, Obj> | undefined;

/** Every message of the schema table and the apimachinery types, as definitions. */
function builtinDefinitions(): Record<string, Obj> {
  if (builtinCache) return builtinCache;
  const defs: Record<string, Obj> = {};
  for (const [name, schema] of Object.values(SPECIAL_DEFS)) defs[name] = schema;
  const kinds = kindMessages();
  for (const m of messageNames()) {
    const props = messageProperties(m);
    defs[definitionName(m)] = {
      type: 'object',
      properties: kinds.has(m) ? { ...typeMetaProps(), ...props } : props,
    };
  }
  defs[`${META}.Patch`] = {
    description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
    type: 'object',
  };
  defs[LIST_META] = {
    type: 'object',
    properties: {
      continue: { type: 'string' },
      remainingItemCount: { type: 'integer', format: 'int64' },
      resourceVersion: { type: 'string' },
      selfLink: { type: 'string' },
    },
  };
  builtinCache = defs;
  return defs;
}

function typeMetaProps(): Obj {
  return {
    apiVersion: {
      description: 'APIVersion defines the versioned schema of this representation of an object.',
      type: 'string',
    },
    kind: {
      description: 'Kind is a string value representing the REST resource this object represents.',
      type: 'string',
    },
  };
}

/**
 * apiextensions' ToStructuralOpenAPIV2, roughly: no junctors; a nullable or unknown-preserving
 * node loses its type, properties and items (kubectl cannot cope with them there); an array left
 * without items loses its type; defaults are stripped.
 */
export function crdSchemaToV2(schema: unknown, depth = 0): Obj {
  if (!isObj(schema) || depth > 64) return {};
  const out: Obj = {};
  for (const [k, v] of Object.entries(schema)) {
    if (['allOf', 'anyOf', 'oneOf', 'not', 'nullable', 'default', 'x-kubernetes-validations'].includes(k))
      continue;
    if (k === 'properties' && isObj(v)) {
      const props: Obj = {};
      for (const [p, s] of Object.entries(v)) props[p] = crdSchemaToV2(s, depth + 1);
      out.properties = props;
    } else if ((k === 'items' || k === 'additionalProperties') && isObj(v)) {
      out[k] = crdSchemaToV2(v, depth + 1);
    } else out[k] = v;
  }
  if (schema.nullable === true || schema['x-kubernetes-preserve-unknown-fields'] === true) {
    if (schema.nullable === true) delete out.type;
    delete out.properties;
    delete out.items;
  }
  if (out.type === 'array' && out.items === undefined) delete out.type;
  if (isObj(schema.additionalProperties) && schema.additionalProperties.nullable === true) {
    delete out.type;
    delete out.additionalProperties;
  }
  const props = asObj(schema.properties) ?? {};
  if (Array.isArray(out.required))
    out.required = out.required.filter((r) => !(typeof r === 'string' && asObj(props[r])?.nullable === true));
  return out;
}

function crDefinition(def: ResourceDef): Obj {
  const v2 = crdSchemaToV2(def.schema ?? { type: 'object' });
  const props = asObj(v2.properties) ?? {};
  return {
    ...v2,
    type: 'object',
    properties: { ...typeMetaProps(), ...props, metadata: ref(OBJECT_META) },
    'x-kubernetes-group-version-kind': [gvkOf(def, def.kind)],
  };
}

/** A served built-in without a protobuf schema (CustomResourceDefinition): spec and status are open. */
function openDefinition(def: ResourceDef): Obj {
  return {
    description: `${def.kind} (the emulator publishes spec and status of this kind as open objects).`,
    type: 'object',
    properties: {
      ...typeMetaProps(),
      metadata: ref(OBJECT_META),
      spec: { type: 'object' },
      status: { type: 'object' },
    },
    'x-kubernetes-group-version-kind': [gvkOf(def, def.kind)],
  };
}

function listDefinition(def: ResourceDef, itemName: string): Obj {
  return {
    type: 'object',
    required: ['items'],
    properties: {
      ...typeMetaProps(),
      items: { type: 'array', items: ref(itemName) },
      metadata: ref(LIST_META),
    },
    'x-kubernetes-group-version-kind': [gvkOf(def, def.listKind)],
  };
}

/** The whole document for what the registry serves now. */
export function openapiV2Doc(registry: Registry, gitVersion: string): Obj {
  const definitions: Record<string, Obj> = { ...builtinDefinitions() };
  for (const def of registry.all()) {
    const message = def.builtin ? messageForKind(apiVersionOf(def), def.kind) : undefined;
    let name: string;
    if (message) {
      name = definitionName(message);
      const d = definitions[name] as Obj;
      definitions[name] = { ...d, 'x-kubernetes-group-version-kind': [gvkOf(def, def.kind)] };
    } else if (def.builtin) {
      name = schemaName(def);
      definitions[name] = openDefinition(def);
    } else {
      name = schemaName(def);
      definitions[name] = crDefinition(def);
    }
    definitions[`${name}List`] = listDefinition(def, name);
  }
  const sorted: Record<string, Obj> = {};
  for (const k of Object.keys(definitions).sort()) sorted[k] = definitions[k] as Obj;
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: gitVersion },
    paths: {},
    definitions: sorted,
    securityDefinitions: {
      BearerToken: {
        description: 'Bearer Token authentication',
        type: 'apiKey',
        name: 'authorization',
        in: 'header',
      },
    },
    security: [{ BearerToken: [] }],
  };
}

/** kube-openapi's ETag: the SHA-512 of the JSON document, in upper-case hex. */
export function openapiEtag(json: string): string {
  return createHash('sha512').update(json).digest('hex').toUpperCase();
}
