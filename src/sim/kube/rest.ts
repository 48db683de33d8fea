/**
 * The generic registry: what the real API server's `genericregistry.Store` does for every
 * resource, on top of {@link Store}. Create, update, patch (merge, JSON, strategic, apply),
 * delete and list, with the semantics controllers rely on:
 *
 * - resourceVersion on every write; 409 Conflict when an update carries a stale one;
 * - uid, creationTimestamp, generateName; `metadata.generation` bumped on spec changes only;
 * - `/status` separation (the main resource ignores status, `/status` ignores the rest);
 * - finalizers and deletionTimestamp: a delete with finalizers only marks the object, the last
 *   finalizer's removal deletes it, and no finalizer may be added once it is marked;
 * - GC finalizers for Foreground/Orphan propagation (the garbage collector does the rest);
 * - managedFields for every write, server-side apply with conflicts;
 * - dryRun=All runs everything but the write;
 * - list with label/field selectors, limit/continue over a consistent snapshot, 410 Expired
 *   when that snapshot has been compacted away.
 */
import { randomUUID } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { validateObjectMeta, validateObjectMetaUpdate } from './builtins/common.ts';
import { apiErrors, StatusError, successStatus, type FieldError, type Status } from './errors.ts';
import {
  asArray,
  asObj,
  asString,
  deepEqual,
  isObj,
  meta,
  metaOf,
  nameOf,
  stringList,
  type Obj,
} from './json.ts';
import {
  apply as serverSideApply,
  decodeManagedFields,
  encodeManagedFields,
  fieldSetOf,
  trackUpdate,
  type Manager,
  type Scope,
} from './patch/apply.ts';
import { columnPath, simpleFieldPath } from './jsonpath.ts';
import { applyJsonPatch, decodeJsonPatch, JsonPatchError } from './patch/json.ts';
import { mergePatch } from './patch/merge.ts';
import { strategicMergePatch, StrategicPatchError } from './patch/strategic.ts';
import type { Registry } from './registry.ts';
import {
  checkFieldsSupported,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  pinnedName,
  type FieldRequirement,
  type LabelSelector,
} from './selectors.ts';
import { objectKey, type Store } from './store.ts';
import {
  apiVersionOf,
  groupResource,
  type ResourceDef,
  type ServiceAllocator,
  type StrategyContext,
} from './types.ts';
import { cloneJson } from '../../lib/json.ts';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  fieldValidation?: FieldValidation;
  /** `status`, `finalize`, or '' for the main resource. */
  subresource?: string;
}

/** What the emulator adds to a client's options: the resolved manager, and internal flags. */
export interface InternalWrite extends WriteOptions {
  manager: string;
  /** Ownership already computed (server-side apply). */
  skipTracking?: boolean;
  /**
   * Webhook conversion (conversion.ts): the write stops before the store with a
   * {@link PendingWrite} when the object must change version, and `live` is the stored object
   * already converted to the request's version (undefined when there is none).
   */
  deferStorage?: boolean;
  live?: Obj | undefined;
}

/** A write prepared in the request's version that must be converted before it is stored. */
export interface PendingWrite {
  key: string;
  /** The object to store, in the request's version. */
  object: Obj;
  /** The resourceVersion the write was prepared against; undefined for a create. */
  oldRv: string | undefined;
  code: 200 | 201;
  warnings: string[];
}

export interface PatchOptions extends WriteOptions {
  /** Server-side apply: take ownership of conflicting fields. */
  force?: boolean;
}

export interface DeleteOptions {
  dryRun?: boolean;
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
}

export interface WriteResult {
  object: Obj;
  /** 201 for creates (including apply and create-on-update), 200 otherwise. */
  code: 200 | 201;
  warnings: string[];
  /** Set instead of a stored object when the write awaits conversion (`deferStorage`). */
  pending?: PendingWrite;
}

export interface DeleteResult {
  body: Obj | Omit<Status, 'reason' | 'message'>;
  code: 200 | 202;
}

export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

export interface ListResult {
  /** The list object in wire form (kind `<Kind>List`). */
  list: Obj;
  /** Matching objects in wire form, with kind/apiVersion (for tables). */
  items: Obj[];
}

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export const PATCH_CONTENT_TYPES: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
  'application/apply-patch+cbor': 'apply',
};

/** The context a write runs in: the request's time and the emulator's shared services. */
export interface RestDeps {
  store: Store;
  registry: Registry;
  services: ServiceAllocator;
  now(): Date;
}

const GENERATE_CHARS = 'bcdfghjklmnpqrstvwxz2456789';
const GENERATE_RETRIES = 8;

/** RFC 3339 with second precision, as `metav1.Time` serialises. */
export function timestamp(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function generateSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += GENERATE_CHARS[Math.floor(Math.random() * GENERATE_CHARS.length)];
  return s;
}

/** The manager name the real server derives from the User-Agent when none is given. */
export function managerFromUserAgent(ua: string | undefined): string {
  const s = (ua ?? '').split('/')[0]?.trim() ?? '';
  return (s || 'unknown').slice(0, 128);
}

interface ContinueToken {
  rv: number;
  start: string;
}

function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start })).toString('base64');
}

function decodeContinue(token: string): ContinueToken {
  try {
    const o = JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as {
      v?: unknown;
      rv?: unknown;
      start?: unknown;
    };
    if (o.v !== 'meta.k8s.io/v1' || typeof o.rv !== 'number' || typeof o.start !== 'string')
      throw new Error('bad');
    return { rv: o.rv, start: o.start };
  } catch {
    throw apiErrors.badRequest(`continue key is not valid: ${token}`);
  }
}

const EXPIRED_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

export interface Filter {
  namespace: string | undefined;
  labels: LabelSelector;
  fields: FieldRequirement[];
}

export function parseFilter(
  def: ResourceDef,
  namespace: string | undefined,
  labelSelector?: string,
  fieldSelector?: string,
): Filter {
  const labels = parseLabelSelector(labelSelector ?? '');
  const fields = parseFieldSelector(fieldSelector ?? '');
  checkFieldsSupported(fields, def.supportedFields);
  return { namespace, labels, fields };
}

export function matches(def: ResourceDef, f: Filter, o: Obj): boolean {
  if (f.labels.length && !matchesLabels(f.labels, labelsOfObj(o))) return false;
  if (f.fields.length && !matchesFields(f.fields, def.fieldLabels(o))) return false;
  return true;
}

function labelsOfObj(o: Obj): Record<string, string> {
  const out: Record<string, string> = {};
  const l = asObj(metaOf(o).labels);
  if (l) for (const [k, v] of Object.entries(l)) if (typeof v === 'string') out[k] = v;
  return out;
}

export class Rest {
  private readonly deps: RestDeps;

  constructor(deps: RestDeps) {
    this.deps = deps;
  }

  /* ------------------------------------------------------------- conversion */

  /** Storage form → the wire form of `def`'s version, with kind and apiVersion. */
  out(def: ResourceDef, stored: Obj): Obj {
    const o = def.fromStorage ? def.fromStorage(stored) : stored;
    if (o.apiVersion === apiVersionOf(def) && o.kind === def.kind) return o;
    // Another version of a webhook-converted kind: left as stored, for conversion.ts to convert.
    if (def.webhookConversion) return o;
    return { ...o, apiVersion: apiVersionOf(def), kind: def.kind };
  }

  private toStorage(def: ResourceDef, o: Obj): Obj {
    const s = def.toStorage ? def.toStorage(o) : o;
    return { ...s, kind: def.kind, apiVersion: asString(s.apiVersion) ?? apiVersionOf(def) };
  }

  private key(def: ResourceDef, namespace: string, name: string): string {
    return objectKey(def.namespaced ? namespace : '', name);
  }

  private context(dryRun: boolean): StrategyContext {
    const { store, registry } = this.deps;
    return {
      now: timestamp(this.deps.now()),
      dryRun,
      lookup(group, resource, namespace, name) {
        const d = registry.preferred(group, resource);
        return d ? store.get(d.storageKey, objectKey(d.namespaced ? namespace : '', name)) : undefined;
      },
      services: this.deps.services,
      unknownFields: [],
    };
  }

  /* -------------------------------------------------------------------- read */

  getStored(def: ResourceDef, namespace: string, name: string): Obj | undefined {
    return this.deps.store.get(def.storageKey, this.key(def, namespace, name));
  }

  get(def: ResourceDef, namespace: string, name: string): Obj {
    const o = this.getStored(def, namespace, name);
    if (!o) throw apiErrors.notFound(groupResource(def), name);
    return this.out(def, o);
  }

  list(def: ResourceDef, namespace: string | undefined, q: ListQuery): ListResult {
    const { store } = this.deps;
    const filter = parseFilter(def, def.namespaced ? namespace : undefined, q.labelSelector, q.fieldSelector);
    const selectorsUsed = filter.labels.length > 0 || filter.fields.length > 0;
    const limit = q.limit && q.limit > 0 ? Math.floor(q.limit) : 0;
    let atRv = store.currentRv();
    let start = '';
    if (q.continue) {
      const tok = decodeContinue(q.continue);
      start = tok.start;
      if (tok.rv >= 0) atRv = tok.rv;
      if (tok.rv >= 0 && tok.rv < store.oldestRv() && tok.rv < store.lastChange(def.storageKey)) {
        const err = apiErrors.expired(EXPIRED_CONTINUE);
        (err.status.metadata as Obj).continue = encodeContinue(-1, start);
        throw err;
      }
    } else if (q.resourceVersion && q.resourceVersion !== '0') {
      const rv = Number(q.resourceVersion);
      if (!Number.isInteger(rv) || rv < 0)
        throw apiErrors.badRequest(`invalid resource version: ${q.resourceVersion}`);
      if (rv > store.currentRv()) {
        throw apiErrors.timeout(`Too large resource version: ${rv}, current: ${store.currentRv()}`, 1);
      }
      if (q.resourceVersionMatch === 'Exact') atRv = rv;
    }
    const ns = def.namespaced ? namespace : undefined;
    let entries: { key: string; object: Obj }[];
    const pinned = pinnedName(filter.fields);
    if (atRv >= store.lastChange(def.storageKey)) {
      let keys: string[];
      if (pinned !== undefined && !def.namespaced) keys = [objectKey('', pinned)];
      else if (pinned !== undefined && ns !== undefined) keys = [objectKey(ns, pinned)];
      else keys = store.keys(def.storageKey, ns);
      entries = [];
      for (const key of keys) {
        const object = store.get(def.storageKey, key);
        if (object) entries.push({ key, object });
      }
    } else {
      entries = store.snapshot(def.storageKey, atRv, ns);
    }
    let i = 0;
    if (start) {
      // Binary search: keys are sorted, start is exclusive (`lastKey\0`).
      let lo = 0;
      let hi = entries.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((entries[mid] as { key: string }).key < start) lo = mid + 1;
        else hi = mid;
      }
      i = lo;
    }
    const items: Obj[] = [];
    let lastKey = '';
    for (; i < entries.length; i++) {
      const e = entries[i] as { key: string; object: Obj };
      if (!matches(def, filter, e.object)) continue;
      if (limit && items.length === limit) break;
      items.push(this.out(def, e.object));
      lastKey = e.key;
    }
    const listMeta: Obj = { resourceVersion: String(atRv) };
    if (limit && i < entries.length) {
      // More may follow: hand out a token; count the rest when no selector filters it.
      listMeta.continue = encodeContinue(atRv, `${lastKey}\u0000`);
      if (!selectorsUsed) listMeta.remainingItemCount = entries.length - i;
    }
    const wireItems = def.builtin
      ? items.map((o) => {
          const { kind: _k, apiVersion: _a, ...rest } = o;
          return rest;
        })
      : items;
    return {
      list: { kind: def.listKind, apiVersion: apiVersionOf(def), metadata: listMeta, items: wireItems },
      items,
    };
  }

  /* ------------------------------------------------------------------ checks */

  private decodeBody(def: ResourceDef, body: unknown, what: string): Obj {
    if (!isObj(body)) throw apiErrors.badRequest(`Object '${what}' is missing in '${JSON.stringify(body)}'`);
    const o = cloneJson(body);
    const kind = asString(o.kind);
    const apiVersion = asString(o.apiVersion);
    if (kind !== undefined && kind !== def.kind) {
      throw apiErrors.badRequest(
        `${kind} in version "${def.version}" cannot be handled as a ${def.kind}: no kind "${kind}" is registered for version "${apiVersion ?? ''}" in scheme`,
      );
    }
    if (apiVersion !== undefined && apiVersion !== apiVersionOf(def)) {
      throw apiErrors.badRequest(
        `the API version in the data (${apiVersion}) does not match the expected API version (${apiVersionOf(def)})`,
      );
    }
    o.kind = def.kind;
    o.apiVersion = apiVersionOf(def);
    if (o.metadata !== undefined && !isObj(o.metadata))
      throw apiErrors.badRequest('metadata must be an object');
    return o;
  }

  private checkNamespace(def: ResourceDef, obj: Obj, namespace: string): void {
    const m = meta(obj);
    if (!def.namespaced) {
      delete m.namespace;
      return;
    }
    const ns = asString(m.namespace) ?? '';
    if (ns && ns !== namespace) {
      throw apiErrors.badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    m.namespace = namespace;
  }

  /** Namespaced creates need a live namespace (404 if absent, 403 while it terminates). */
  private checkNamespaceLifecycle(def: ResourceDef, obj: Obj, namespace: string): void {
    if (!def.namespaced) return;
    const nsDef = this.deps.registry.get('', 'v1', 'namespaces');
    const ns = nsDef ? this.getStored(nsDef, '', namespace) : undefined;
    if (!ns) throw apiErrors.notFound({ group: '', resource: 'namespaces' }, namespace);
    if (metaOf(ns).deletionTimestamp || asString(asObj(ns.status)?.phase) === 'Terminating') {
      const err = apiErrors.forbidden(
        groupResource(def),
        nameOf(obj),
        `unable to create new content in namespace ${namespace} because it is being terminated`,
      );
      err.status.details = {
        ...err.status.details,
        causes: [
          {
            reason: 'NamespaceTerminating',
            message: `namespace ${namespace} is being terminated`,
            field: 'metadata.namespace',
          },
        ],
      };
      throw err;
    }
  }

  /** A CRD that is being deleted still serves reads and deletes, but no new instances. */
  private checkCrdTerminating(def: ResourceDef): void {
    if (!def.crd) return;
    const crdDef = this.deps.registry.get('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
    const crd = crdDef ? this.getStored(crdDef, '', def.crd) : undefined;
    if (crd && metaOf(crd).deletionTimestamp) {
      throw new StatusError(
        405,
        'MethodNotAllowed',
        'create not allowed while custom resource definition is terminating',
      );
    }
  }

  private invalid(def: ResourceDef, name: string, errs: FieldError[]): StatusError {
    return apiErrors.invalid(def.group, def.kind, name, errs);
  }

  private unknownFieldResult(ctx: StrategyContext, validation: FieldValidation | undefined): string[] {
    if (!ctx.unknownFields.length || validation === 'Ignore') return [];
    const texts = ctx.unknownFields.map((f) => `unknown field ${JSON.stringify(f)}`);
    if (validation === 'Strict') throw apiErrors.badRequest(`strict decoding error: ${texts.join(', ')}`);
    return texts;
  }

  private scope(def: ResourceDef, subresource: string | undefined): Scope {
    if (!def.strategy.statusSubresource) return { part: 'all' };
    return { part: subresource === 'status' ? 'status' : 'main' };
  }

  private managersOf(obj: Obj | undefined): Manager[] {
    return (obj && decodeManagedFields(metaOf(obj).managedFields)) ?? [];
  }

  /** Records ownership of an Update-type write into `obj.metadata.managedFields`. */
  private track(
    def: ResourceDef,
    obj: Obj,
    old: Obj | undefined,
    manager: string,
    subresource: string | undefined,
    now: string,
  ): void {
    // A request that sends managedFields replaces them (`[{}]` resets); otherwise the live ones carry on.
    // A patch or update that carries the live ones back (the usual case) decodes nothing: the
    // live object's managers are known (apply.ts keeps them beside the stored array).
    const raw = metaOf(obj).managedFields;
    const carried = old !== undefined && deepEqual(raw, metaOf(old).managedFields);
    const sent = carried ? undefined : decodeManagedFields(raw);
    const base =
      sent && sent.length
        ? sent.filter((m) => m.entry.manager !== '' || m.fields.size > 0)
        : this.managersOf(old);
    const next = trackUpdate(base, old, obj, {
      manager,
      apiVersion: apiVersionOf(def),
      time: now,
      hints: def.hints,
      scope: this.scope(def, subresource),
      ...(subresource && subresource !== 'finalize' ? { subresource } : {}),
    });
    setManaged(obj, next);
  }

  /* ------------------------------------------------------------------ create */

  create(def: ResourceDef, namespace: string, body: unknown, opts: InternalWrite): WriteResult {
    const wire = this.decodeBody(def, body, 'kind');
    if (def.review) return { code: 201, object: def.review(wire), warnings: [] };
    this.checkNamespace(def, wire, namespace);
    if (asString(metaOf(wire).resourceVersion)) {
      throw apiErrors.internal('resourceVersion should not be set on objects to be created');
    }
    this.checkCrdTerminating(def);
    const ctx = this.context(opts.dryRun === true);
    const obj = this.toStorage(def, wire);
    const m = meta(obj);
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
    delete m.selfLink;
    def.strategy.prepareForCreate?.(ctx, obj);
    m.uid = randomUUID();
    m.creationTimestamp = ctx.now;
    if (def.strategy.generationOf) m.generation = 1;
    else delete m.generation;
    const generated = !asString(m.name) && !!asString(m.generateName);
    if (generated) m.name = `${asString(m.generateName) ?? ''}${generateSuffix()}`;
    this.checkNamespaceLifecycle(def, obj, namespace);
    this.validateCreate(def, ctx, obj);
    const warnings = this.unknownFieldResult(ctx, opts.fieldValidation);
    if (!opts.skipTracking) this.track(def, obj, undefined, opts.manager, opts.subresource, ctx.now);
    for (let attempt = 0; ; attempt++) {
      const key = this.key(def, namespace, nameOf(obj));
      if (!this.deps.store.get(def.storageKey, key)) break;
      if (!generated || attempt >= GENERATE_RETRIES)
        throw apiErrors.alreadyExists(groupResource(def), nameOf(obj));
      m.name = `${asString(m.generateName) ?? ''}${generateSuffix()}`;
    }
    const allocErrs = def.strategy.allocate?.(ctx, obj, undefined) ?? [];
    if (allocErrs.length) throw this.invalid(def, nameOf(obj), allocErrs);
    if (opts.dryRun) return { object: this.out(def, obj), code: 201, warnings };
    const key = this.key(def, namespace, nameOf(obj));
    if (this.mustConvert(def, obj, opts))
      return {
        object: obj,
        code: 201,
        warnings,
        pending: { key, object: obj, oldRv: undefined, code: 201, warnings },
      };
    const stored = this.deps.store.put(def.storageKey, key, obj);
    return { object: this.out(def, stored), code: 201, warnings };
  }

  private validateCreate(def: ResourceDef, ctx: StrategyContext, obj: Obj): void {
    const errs = [
      ...validateObjectMeta(obj, def),
      ...(def.strategy.validate?.(ctx, obj) ?? []),
      ...(def.strategy.validateCreate?.(ctx, obj) ?? []),
    ];
    if (errs.length) throw this.invalid(def, nameOf(obj) || asString(metaOf(obj).generateName) || '', errs);
  }

  /* ------------------------------------------------------------------ update */

  update(def: ResourceDef, namespace: string, name: string, body: unknown, opts: InternalWrite): WriteResult {
    const wire = this.decodeBody(def, body, 'kind');
    const bodyName = asString(metaOf(wire).name) ?? '';
    if (bodyName && bodyName !== name) {
      throw apiErrors.badRequest(
        `the name of the object (${bodyName}) does not match the name on the URL (${name})`,
      );
    }
    meta(wire).name = name;
    this.checkNamespace(def, wire, namespace);
    const old = this.liveOf(def, namespace, name, opts);
    if (!old) {
      if (def.strategy.allowCreateOnUpdate && !opts.subresource) {
        delete meta(wire).resourceVersion;
        return this.create(def, namespace, wire, opts);
      }
      throw apiErrors.notFound(groupResource(def), name);
    }
    const rv = asString(metaOf(wire).resourceVersion) ?? '';
    if (!rv && !def.strategy.allowUnconditionalUpdate) {
      throw this.invalid(def, name, [
        {
          type: 'FieldValueInvalid',
          field: 'metadata.resourceVersion',
          value: 0,
          detail: 'must be specified for an update',
        },
      ]);
    }
    if (rv && rv !== asString(metaOf(old).resourceVersion))
      throw apiErrors.staleUpdate(groupResource(def), name);
    return this.write(def, namespace, old, this.toStorage(def, wire), opts, true);
  }

  /**
   * The common tail of update and patch: system fields from the old object, strategy, generation,
   * validation, allocation, ownership, no-op detection, the write, and deletion once the last
   * finalizer is gone.
   */
  private write(
    def: ResourceDef,
    namespace: string,
    old: Obj,
    obj: Obj,
    opts: InternalWrite,
    track: boolean,
  ): WriteResult {
    const ctx = this.context(opts.dryRun === true);
    const m = meta(obj);
    const o = metaOf(old);
    m.name = o.name;
    if (def.namespaced) m.namespace = o.namespace;
    else delete m.namespace;
    if (!asString(m.uid)) m.uid = o.uid;
    m.creationTimestamp = o.creationTimestamp;
    for (const k of ['deletionTimestamp', 'deletionGracePeriodSeconds'] as const) {
      if (o[k] === undefined) delete m[k];
      else m[k] = o[k];
    }
    if (o.generation === undefined) delete m.generation;
    else m.generation = o.generation;
    delete m.selfLink;
    const sub = opts.subresource ?? '';
    if (sub === 'status') {
      def.strategy.prepareForStatusUpdate?.(ctx, obj, old);
    } else if (sub === 'finalize') {
      finalizeOnly(obj, old);
    } else {
      def.strategy.prepareForUpdate?.(ctx, obj, old);
    }
    // Strategies may rebuild the object from old: read metadata afresh.
    const mm = meta(obj);
    mm.resourceVersion = o.resourceVersion;
    if (def.strategy.generationOf && typeof o.generation === 'number') {
      const changed = !deepEqual(def.strategy.generationOf(obj), def.strategy.generationOf(old));
      mm.generation = changed ? o.generation + 1 : o.generation;
    }
    const errs = [
      ...validateObjectMeta(obj, def),
      ...validateObjectMetaUpdate(obj, old),
      ...(def.strategy.validate?.(ctx, obj) ?? []),
      ...(def.strategy.validateUpdate?.(ctx, obj, old) ?? []),
    ];
    if (errs.length) throw this.invalid(def, nameOf(obj), errs);
    const warnings = this.unknownFieldResult(ctx, opts.fieldValidation);
    if (track && !opts.skipTracking) this.track(def, obj, old, opts.manager, sub, ctx.now);
    // A write whose only change is managedFields timestamps is a no-op, as a real API server reverts
    // it (IgnoreManagedFieldsTimestampsTransformer): an apply of what is there moves no resourceVersion.
    if (deepEqual(obj, old) || deepEqual(withoutManagedTimes(obj), withoutManagedTimes(old)))
      return { object: this.out(def, old), code: 200, warnings };
    const allocErrs = def.strategy.allocate?.(ctx, obj, old) ?? [];
    if (allocErrs.length) throw this.invalid(def, nameOf(obj), allocErrs);
    if (opts.dryRun) return { object: this.out(def, obj), code: 200, warnings };
    const key = this.key(def, namespace, nameOf(obj));
    if (this.mustConvert(def, obj, opts)) {
      const oldRv = asString(o.resourceVersion);
      return { object: obj, code: 200, warnings, pending: { key, object: obj, oldRv, code: 200, warnings } };
    }
    const stored = this.deps.store.put(def.storageKey, key, obj);
    if (this.readyToGo(stored)) {
      // The last finalizer went: the object goes too (watchers see MODIFIED, then DELETED).
      this.deps.store.remove(def.storageKey, key);
      def.strategy.release?.(ctx, stored);
    }
    return { object: this.out(def, stored), code: 200, warnings };
  }

  /** The object a write starts from: the stored one, or the one conversion.ts converted for it. */
  private liveOf(def: ResourceDef, namespace: string, name: string, opts: InternalWrite): Obj | undefined {
    return opts.deferStorage ? opts.live : this.getStored(def, namespace, name);
  }

  /**
   * The emulator's own controllers (GC, namespace and CRD cleanup) patch metadata, which is the
   * same in every version: an object of a webhook-converted kind stored in another version than
   * `def`'s is patched in the version it is stored in, so nothing needs the webhook.
   */
  private storedVersionDef(def: ResourceDef, old: Obj, opts: InternalWrite): ResourceDef {
    if (!def.webhookConversion || opts.deferStorage || old.apiVersion === apiVersionOf(def)) return def;
    return this.deps.registry.byKind(asString(old.apiVersion) ?? '', def.kind) ?? def;
  }

  /** A webhook-converted object that is not in the storage version cannot be stored as it is. */
  private mustConvert(def: ResourceDef, obj: Obj, opts: InternalWrite): boolean {
    const wc = def.webhookConversion;
    if (!wc || obj.apiVersion === `${def.group}/${wc.storageVersion}`) return false;
    if (opts.deferStorage) return true;
    // In-process writes (the emulator's own controllers) cannot wait for a webhook.
    throw apiErrors.internal(
      `${def.resource}.${def.group} ${nameOf(obj)}: a write in ${def.version} needs the CRD's conversion webhook, which in-process writes and /scale do not call; write it in ${wc.storageVersion}`,
    );
  }

  /**
   * Stores a {@link PendingWrite} once converted to the storage version, if nothing changed the
   * object meanwhile (409 otherwise, as etcd's precondition would).
   */
  commit(def: ResourceDef, pending: PendingWrite, converted: Obj): WriteResult {
    const { store } = this.deps;
    const current = store.get(def.storageKey, pending.key);
    const name = nameOf(converted);
    if (pending.oldRv === undefined) {
      if (current) throw apiErrors.alreadyExists(groupResource(def), name);
    } else if (!current) {
      throw apiErrors.notFound(groupResource(def), name);
    } else if (asString(metaOf(current).resourceVersion) !== pending.oldRv) {
      throw apiErrors.staleUpdate(groupResource(def), name);
    }
    const stored = store.put(def.storageKey, pending.key, converted);
    if (this.readyToGo(stored)) {
      store.remove(def.storageKey, pending.key);
      def.strategy.release?.(this.context(false), stored);
    }
    return { object: this.out(def, stored), code: pending.code, warnings: pending.warnings };
  }

  private readyToGo(o: Obj): boolean {
    const m = metaOf(o);
    if (!m.deletionTimestamp) return false;
    if (stringList(m.finalizers).length) return false;
    return stringList(asObj(o.spec)?.finalizers).length === 0 || asString(o.kind) !== 'Namespace';
  }

  /* ------------------------------------------------------------------- patch */

  patch(
    def: ResourceDef,
    namespace: string,
    name: string,
    type: PatchType,
    raw: string,
    opts: PatchOptions & InternalWrite,
  ): WriteResult {
    if (type === 'strategic' && !def.strategy.strategicMerge) {
      throw apiErrors.unsupportedMediaType(
        Object.keys(PATCH_CONTENT_TYPES).filter(
          (t) => t !== 'application/strategic-merge-patch+json' && !t.endsWith('cbor'),
        ),
      );
    }
    if (type === 'apply') return this.applyPatch(def, namespace, name, raw, opts);
    const old = this.liveOf(def, namespace, name, opts);
    if (!old) throw apiErrors.notFound(groupResource(def), name);
    const inStored = this.storedVersionDef(def, old, opts);
    if (inStored !== def) return this.patch(inStored, namespace, name, type, raw, opts);
    const current = this.out(def, old);
    let patched: unknown;
    try {
      if (type === 'json') {
        let doc: unknown;
        try {
          doc = JSON.parse(raw);
        } catch (err) {
          throw apiErrors.badRequest(`error decoding patch: ${(err as Error).message}`);
        }
        patched = applyJsonPatch(current, decodeJsonPatch(doc));
      } else {
        let doc: unknown;
        try {
          doc = JSON.parse(raw);
        } catch (err) {
          throw apiErrors.badRequest(`error decoding patch: ${(err as Error).message}`);
        }
        if (!isObj(doc)) throw apiErrors.badRequest('patch must be a JSON object');
        patched = type === 'merge' ? mergePatch(current, doc) : strategicMergePatch(current, doc, def.hints);
      }
    } catch (err) {
      if (err instanceof JsonPatchError || err instanceof StrategicPatchError) {
        throw new StatusError(422, 'Invalid', err.message);
      }
      throw err;
    }
    if (!isObj(patched)) throw apiErrors.badRequest('patch produced a non-object');
    const wire = this.decodeBody(def, patched, 'kind');
    const pm = metaOf(wire);
    if (asString(pm.name) !== name) {
      throw this.invalid(def, name, [immutable('metadata.name', pm.name)]);
    }
    // A patch that sets a different resourceVersion is a precondition, as on the real server.
    const rv = asString(pm.resourceVersion);
    if (rv !== undefined && rv !== asString(metaOf(old).resourceVersion)) {
      throw apiErrors.staleUpdate(groupResource(def), name);
    }
    return this.write(def, namespace, old, this.toStorage(def, wire), opts, true);
  }

  private applyPatch(
    def: ResourceDef,
    namespace: string,
    name: string,
    raw: string,
    opts: PatchOptions & InternalWrite,
  ): WriteResult {
    if (!opts.fieldManager) {
      throw this.invalid(def, name, [
        { type: 'FieldValueRequired', field: 'fieldManager', detail: 'is required for apply patch' },
      ]);
    }
    let doc: unknown;
    try {
      doc = parseYaml(raw) as unknown;
    } catch (err) {
      throw apiErrors.badRequest(`error decoding YAML: ${(err as Error).message}`);
    }
    if (!isObj(doc)) throw apiErrors.badRequest('apply patch must be a YAML or JSON object');
    const kind = asString(doc.kind);
    const apiVersion = asString(doc.apiVersion);
    if (!kind || !apiVersion) {
      throw apiErrors.badRequest(
        `${!apiVersion ? 'apiVersion' : 'kind'} must be set in the applied configuration`,
      );
    }
    if (kind !== def.kind || apiVersion !== apiVersionOf(def)) {
      throw apiErrors.badRequest(
        `the apiVersion or kind of the applied configuration (${apiVersion}, ${kind}) does not match the request (${apiVersionOf(def)}, ${def.kind})`,
      );
    }
    const am = asObj(doc.metadata) ?? {};
    if (asString(am.name) && asString(am.name) !== name) {
      throw apiErrors.badRequest(
        `the name of the object (${asString(am.name) ?? ''}) does not match the name on the URL (${name})`,
      );
    }
    const now = timestamp(this.deps.now());
    const old = this.liveOf(def, namespace, name, opts);
    const sub = opts.subresource ?? '';
    const info = {
      manager: opts.fieldManager,
      apiVersion: apiVersionOf(def),
      time: now,
      hints: def.hints,
      scope: this.scope(def, sub),
      ...(sub ? { subresource: sub } : {}),
    };
    if (!old) {
      if (sub) throw apiErrors.notFound(groupResource(def), name);
      const base: Obj = { apiVersion, kind, metadata: { name, ...(def.namespaced ? { namespace } : {}) } };
      const result = serverSideApply(base, doc, [], info, true);
      const created = result.object;
      setManaged(created, result.managers);
      return this.create(def, namespace, created, { ...opts, skipTracking: true });
    }
    const live = this.out(def, old);
    let result = serverSideApply(live, doc, this.managersOf(old), info, opts.force === true);
    if (
      result.conflicts.length &&
      opts.fieldManager === 'kubectl' &&
      this.lastAppliedCovers(def, live, sub, result.conflicts)
    ) {
      // The real server's lastAppliedManager: kubectl moving from client-side to server-side
      // apply may take over what its last-applied-configuration annotation says it applied.
      result = serverSideApply(live, doc, this.managersOf(old), info, true);
    }
    if (result.conflicts.length) throw apiErrors.applyConflicts(groupResource(def), name, result.conflicts);
    const next = result.object;
    setManaged(next, result.managers);
    if (opts.fieldManager === 'kubectl') syncLastApplied(next, doc);
    return this.write(def, namespace, old, this.toStorage(def, next), { ...opts, skipTracking: true }, false);
  }

  private lastAppliedCovers(
    def: ResourceDef,
    live: Obj,
    sub: string,
    conflicts: { path: string }[],
  ): boolean {
    const text = asString(asObj(metaOf(live).annotations)?.[LAST_APPLIED]);
    if (!text) return false;
    let lastApplied: unknown;
    try {
      lastApplied = JSON.parse(text);
    } catch {
      return false;
    }
    if (!isObj(lastApplied)) return false;
    const allowed = fieldSetOf(lastApplied, def.hints, this.scope(def, sub));
    return conflicts.every((c) => allowed.has(c.path));
  }

  /* ------------------------------------------------------------------ delete */

  delete(def: ResourceDef, namespace: string, name: string, opts: DeleteOptions): DeleteResult {
    const old = this.getStored(def, namespace, name);
    if (!old) throw apiErrors.notFound(groupResource(def), name);
    const om = metaOf(old);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== om.uid) {
      throw apiErrors.conflict(
        groupResource(def),
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${asString(om.uid) ?? ''}`,
      );
    }
    if (pre?.resourceVersion && pre.resourceVersion !== om.resourceVersion) {
      throw apiErrors.conflict(
        groupResource(def),
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${asString(om.resourceVersion) ?? ''}`,
      );
    }
    const ctx = this.context(opts.dryRun === true);
    const policy =
      opts.propagationPolicy ??
      (opts.orphanDependents === true
        ? 'Orphan'
        : opts.orphanDependents === false
          ? 'Background'
          : undefined);
    const accepted: 200 | 202 = opts.orphanDependents === false ? 202 : 200;
    const key = this.key(def, namespace, name);

    let obj = cloneJson(old);
    const graceful = def.strategy.gracefulDelete?.(ctx, obj);
    if (graceful) obj = graceful;
    const m = meta(obj);
    const alreadyDeleting = !!om.deletionTimestamp;
    if (!alreadyDeleting) {
      let fin = stringList(m.finalizers).filter((f) => f !== 'orphan' && f !== 'foregroundDeletion');
      const hadGc = stringList(m.finalizers).filter((f) => f === 'orphan' || f === 'foregroundDeletion');
      if (policy === 'Orphan') fin.push('orphan');
      else if (policy === 'Foreground') fin.push('foregroundDeletion');
      else if (policy === undefined) fin = [...fin, ...hadGc];
      if (fin.length) m.finalizers = fin;
      else delete m.finalizers;
    }
    const pending = stringList(m.finalizers).length > 0 || !!graceful;
    if (pending) {
      if (!alreadyDeleting) {
        m.deletionTimestamp ??= ctx.now;
        m.deletionGracePeriodSeconds ??= 0;
        if (typeof m.generation === 'number') m.generation += 1;
      }
      if (deepEqual(obj, old)) return { body: this.out(def, old), code: accepted };
      if (opts.dryRun) return { body: this.out(def, obj), code: accepted };
      const stored = this.deps.store.put(def.storageKey, key, obj);
      if (this.readyToGo(stored)) {
        this.deps.store.remove(def.storageKey, key);
        def.strategy.release?.(ctx, stored);
      }
      return { body: this.out(def, stored), code: accepted };
    }
    if (opts.dryRun) return { body: this.deletedBody(def, old), code: 200 };
    const gone = this.deps.store.remove(def.storageKey, key) ?? old;
    def.strategy.release?.(ctx, gone);
    return { body: this.deletedBody(def, gone), code: 200 };
  }

  private deletedBody(def: ResourceDef, o: Obj): Obj | Omit<Status, 'reason' | 'message'> {
    if (def.strategy.returnDeletedObject) return this.out(def, o);
    return successStatus({
      name: nameOf(o),
      ...(def.group ? { group: def.group } : {}),
      kind: def.resource,
      uid: asString(metaOf(o).uid) ?? '',
    });
  }

  deleteCollection(def: ResourceDef, namespace: string | undefined, q: ListQuery, opts: DeleteOptions): Obj {
    const { items } = this.list(def, namespace, { ...q, limit: 0, continue: '' });
    const deleted: Obj[] = [];
    for (const item of items) {
      try {
        const r = this.delete(def, asString(metaOf(item).namespace) ?? '', nameOf(item), opts);
        deleted.push(isObj(r.body) && r.body.kind === def.kind ? r.body : item);
      } catch (err) {
        // Objects deleted concurrently are not an error for a collection delete.
        if (!(err instanceof StatusError && err.code === 404)) throw err;
      }
    }
    return {
      kind: def.listKind,
      apiVersion: apiVersionOf(def),
      metadata: { resourceVersion: String(this.deps.store.currentRv()) },
      items: def.builtin ? deleted.map(({ kind: _k, apiVersion: _a, ...rest }) => rest) : deleted,
    };
  }

  /* ------------------------------------------------------------------- scale */

  getScale(def: ResourceDef, namespace: string, name: string): Obj {
    const o = this.get(def, namespace, name);
    return scaleOf(def, o);
  }

  updateScale(
    def: ResourceDef,
    namespace: string,
    name: string,
    replicas: number,
    rv: string | undefined,
    opts: InternalWrite,
  ): Obj {
    const old = this.getStored(def, namespace, name);
    if (!old) throw apiErrors.notFound(groupResource(def), name);
    if (rv && rv !== asString(metaOf(old).resourceVersion))
      throw apiErrors.staleUpdate(groupResource(def), name);
    if (!Number.isInteger(replicas) || replicas < 0) {
      throw apiErrors.invalid('autoscaling', 'Scale', name, [
        {
          type: 'FieldValueInvalid',
          field: 'spec.replicas',
          value: replicas,
          detail: 'must be greater than or equal to 0',
        },
      ]);
    }
    const next = structuredClone(this.out(def, old));
    const path = simpleFieldPath(def.scale?.specReplicasPath ?? '.spec.replicas') ?? ['spec', 'replicas'];
    let cur: Obj = next;
    for (const p of path.slice(0, -1)) {
      if (!isObj(cur[p])) cur[p] = {};
      cur = cur[p] as Obj;
    }
    cur[path[path.length - 1] as string] = replicas;
    const r = this.write(def, namespace, old, this.toStorage(def, next), { ...opts, subresource: '' }, true);
    return scaleOf(def, r.object);
  }
}

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * The real server's lastAppliedUpdater: a server-side apply by kubectl keeps an existing
 * last-applied-configuration annotation current, so a later client-side apply still works.
 */
function syncLastApplied(obj: Obj, applied: Obj): void {
  const annotations = asObj(metaOf(obj).annotations);
  if (!annotations || typeof annotations[LAST_APPLIED] !== 'string') return;
  const copy = structuredClone(applied);
  const m = asObj(copy.metadata);
  const a = asObj(m?.annotations);
  if (a) {
    delete a[LAST_APPLIED];
    if (m && Object.keys(a).length === 0) delete m.annotations;
  }
  annotations[LAST_APPLIED] = JSON.stringify(copy);
}

function setManaged(obj: Obj, managers: Manager[]): void {
  const encoded = encodeManagedFields(managers);
  if (encoded.length) meta(obj).managedFields = encoded;
  else delete meta(obj).managedFields;
}

/** `/finalize` of namespaces: only spec.finalizers may change. */
function finalizeOnly(obj: Obj, old: Obj): void {
  const fin = asArray(asObj(obj.spec)?.finalizers) ?? [];
  const next = structuredClone(old);
  next.spec = { ...(asObj(next.spec) ?? {}), finalizers: fin };
  const managed = metaOf(obj).managedFields;
  if (managed === undefined) delete meta(next).managedFields;
  else meta(next).managedFields = managed;
  for (const k of Object.keys(obj)) delete obj[k];
  Object.assign(obj, next);
}

function immutable(path: string, value: unknown): FieldError {
  return { type: 'FieldValueInvalid', field: path, value: value ?? '', detail: 'field is immutable' };
}

function scaleOf(def: ResourceDef, o: Obj): Obj {
  const get = (p: string | undefined) => (p ? columnPath(p)(o) : undefined);
  const spec = get(def.scale?.specReplicasPath);
  const status = get(def.scale?.statusReplicasPath);
  const selector = get(def.scale?.labelSelectorPath);
  const m = metaOf(o);
  let selectorText = '';
  if (typeof selector === 'string') selectorText = selector;
  else if (isObj(selector)) {
    selectorText = Object.entries(asObj(selector.matchLabels) ?? {})
      .map(([k, v]) => `${k}=${String(v as string)}`)
      .join(',');
  }
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: m.name,
      ...(m.namespace ? { namespace: m.namespace } : {}),
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: { replicas: typeof spec === 'number' ? spec : 0 },
    status: {
      replicas: typeof status === 'number' ? status : 0,
      ...(selectorText ? { selector: selectorText } : {}),
    },
  };
}

/** The object with the `time` of each managedFields entry left out. */
function withoutManagedTimes(o: Obj): Obj {
  const m = metaOf(o);
  if (!Array.isArray(m.managedFields)) return o;
  const managedFields = (m.managedFields as unknown[]).map((e) => {
    if (!e || typeof e !== 'object') return e;
    const { time: _time, ...rest } = e as Record<string, unknown>;
    return rest;
  });
  return { ...o, metadata: { ...m, managedFields } };
}
