/**
 * Server-side apply and field ownership (`metadata.managedFields`), after structured-merge-diff:
 *
 * - every write records which manager set which fields, as `FieldsV1` (`f:` fields, `k:` keyed
 *   list items, `v:` set items, `.` for an item that is itself owned);
 * - an Update (create, update, patch) gives the writer the fields it added or changed and takes
 *   them from every other manager;
 * - an Apply merges the applied configuration into the live object (maps recursively, keyed and
 *   set lists by item, atomic lists and scalars replaced), removes the fields the same manager
 *   applied last time and no longer applies (unless someone else owns them too), and fails with
 *   409 Conflict naming each field another manager owns with a different value, unless forced,
 *   in which case ownership moves to the applier.
 *
 * Simplifications (docs/sim-kube.md): list semantics come from {@link Hints} (tables of the
 * common built-in fields, or the CRD schema), other lists are atomic; managers are identified
 * by name, operation and subresource; no version conversion of managed fields.
 */
import { deepEqual, isObj, type Obj } from '../json.ts';
import type { Hints } from './hints.ts';

/** A set of field paths; each path is its elements (`f:spec`, `k:{"name":"a"}`) joined by `\n`. */
export type FieldSet = Set<string>;

const SEP = '\n';

/** Fields the server owns, never any manager (as the real field manager strips them). */
const IGNORED_TOP = new Set(['apiVersion', 'kind']);
const IGNORED_META = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
]);

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Obj;
  subresource?: string;
}

export interface Scope {
  /** Which part of the object the request may own: all but status, only status, or all. */
  part: 'main' | 'status' | 'all';
}

const MAX_DEPTH = 64;

/** The field set of an object: every leaf, every keyed/set list item, every atomic value. */
export function fieldSetOf(obj: Obj, hints: Hints, scope: Scope): FieldSet {
  const out: FieldSet = new Set();
  for (const [k, v] of Object.entries(obj)) {
    if (IGNORED_TOP.has(k)) continue;
    if (scope.part === 'main' && k === 'status') continue;
    if (scope.part === 'status' && k !== 'status') continue;
    if (k === 'metadata' && isObj(v)) {
      for (const [mk, mv] of Object.entries(v)) {
        if (IGNORED_META.has(mk)) continue;
        walk(mv, ['metadata', mk], [`f:metadata`, `f:${mk}`], hints, out, 0);
      }
      continue;
    }
    walk(v, [k], [`f:${k}`], hints, out, 0);
  }
  return out;
}

function keyElement(item: Obj, keys: string[]): string {
  const k: Obj = {};
  for (const name of [...keys].sort()) if (item[name] !== undefined) k[name] = item[name];
  return `k:${JSON.stringify(k)}`;
}

function walk(
  v: unknown,
  fieldPath: string[],
  els: string[],
  hints: Hints,
  out: FieldSet,
  depth: number,
): void {
  if (depth > MAX_DEPTH) return;
  const hint = hints.get(fieldPath);
  if (isObj(v)) {
    const entries = Object.entries(v);
    if (hint?.atomicMap || entries.length === 0) {
      out.add(els.join(SEP));
      return;
    }
    for (const [k, x] of entries) walk(x, [...fieldPath, k], [...els, `f:${k}`], hints, out, depth + 1);
    return;
  }
  if (Array.isArray(v)) {
    const list = hint?.list;
    if (!list || list.type === 'atomic' || v.length === 0) {
      out.add(els.join(SEP));
      return;
    }
    for (const item of v) {
      if (list.type === 'set') {
        out.add([...els, `v:${JSON.stringify(item)}`].join(SEP));
      } else if (isObj(item)) {
        const itemEls = [...els, keyElement(item, list.keys)];
        out.add(itemEls.join(SEP));
        for (const [k, x] of Object.entries(item)) {
          walk(x, [...fieldPath, k], [...itemEls, `f:${k}`], hints, out, depth + 1);
        }
      }
    }
    return;
  }
  out.add(els.join(SEP));
}

/** Resolves a path against an object: the value there, or undefined. */
export function valueAt(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const el of path.split(SEP)) {
    if (el.startsWith('f:')) {
      if (!isObj(cur)) return undefined;
      cur = cur[el.slice(2)];
    } else if (el.startsWith('k:')) {
      if (!Array.isArray(cur)) return undefined;
      const key = JSON.parse(el.slice(2)) as Obj;
      cur = cur.find((x) => isObj(x) && Object.entries(key).every(([k, kv]) => deepEqual(x[k], kv)));
    } else if (el.startsWith('v:')) {
      if (!Array.isArray(cur)) return undefined;
      const want = JSON.parse(el.slice(2)) as unknown;
      cur = cur.find((x) => deepEqual(x, want));
    } else return undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

/** Deletes the field or list item a path names; returns whether something was removed. */
function removeAt(obj: Obj, path: string): boolean {
  const els = path.split(SEP);
  const last = els.pop();
  if (last === undefined) return false;
  const parent = els.length ? valueAt(obj, els.join(SEP)) : obj;
  if (last.startsWith('f:')) {
    if (!isObj(parent) || !Object.hasOwn(parent, last.slice(2))) return false;
    delete parent[last.slice(2)];
    return true;
  }
  if (!Array.isArray(parent)) return false;
  const item = valueAt(parent, last);
  const i = parent.indexOf(item);
  if (item === undefined || i < 0) return false;
  parent.splice(i, 1);
  return true;
}

/** `.spec.ports[port=80,protocol="TCP"].targetPort`, the way conflicts name fields. */
export function renderPath(path: string): string {
  let s = '';
  for (const el of path.split(SEP)) {
    if (el.startsWith('f:')) s += `.${el.slice(2)}`;
    else if (el.startsWith('k:')) {
      const key = JSON.parse(el.slice(2)) as Obj;
      s += `[${Object.entries(key)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    } else if (el.startsWith('v:')) s += `[=${el.slice(2)}]`;
  }
  return s;
}

/**
 * How often a FieldsV1 trie was decoded or encoded: every write decodes the live object's
 * managedFields and encodes the new ones, unless the caches below already hold them (tests count).
 */
export const fieldsV1Work = { decoded: 0, encoded: 0 };

/** FieldsV1 trie → set. */
export function decodeFieldsV1(trie: unknown): FieldSet {
  fieldsV1Work.decoded++;
  const out: FieldSet = new Set();
  const visit = (node: unknown, prefix: string[], depth: number) => {
    if (!isObj(node) || depth > MAX_DEPTH) return;
    const keys = Object.keys(node);
    if (keys.length === 0 && prefix.length) out.add(prefix.join(SEP));
    for (const k of keys) {
      if (k === '.') out.add(prefix.join(SEP));
      else visit(node[k], [...prefix, k], depth + 1);
    }
  };
  visit(trie, [], 0);
  return out;
}

/** Set → FieldsV1 trie: a member with children gets a `.` entry. */
export function encodeFieldsV1(set: FieldSet): Obj {
  fieldsV1Work.encoded++;
  const root: Obj = {};
  const paths = [...set].map((p) => p.split(SEP));
  const members = new Set(set);
  for (const els of paths) {
    let node = root;
    for (const el of els) {
      let next = node[el];
      if (!isObj(next)) {
        next = {};
        node[el] = next;
      }
      node = next as Obj;
    }
  }
  // Mark members that also have children with '.'.
  const mark = (node: Obj, prefix: string[], depth: number) => {
    if (depth > MAX_DEPTH) return;
    for (const [k, child] of Object.entries(node)) {
      if (!isObj(child) || k === '.') continue;
      const p = [...prefix, k];
      if (Object.keys(child).length > 0) {
        if (members.has(p.join(SEP))) child['.'] = {};
        mark(child, p, depth + 1);
      }
    }
  };
  mark(root, [], 0);
  return sortTrie(root);
}

function sortTrie(node: Obj): Obj {
  const out: Obj = {};
  for (const k of Object.keys(node).sort()) {
    const v = node[k];
    out[k] = isObj(v) ? sortTrie(v) : v;
  }
  return out;
}

export interface Manager {
  entry: Omit<ManagedFieldsEntry, 'fieldsV1'>;
  fields: FieldSet;
}

/*
 * Stored objects never change (store.ts), so neither do their managedFields: the managers an
 * encoded array came from, or was decoded into, are kept beside it, and a manager whose fields a
 * write left alone keeps its set, whose trie is kept beside it. A write then decodes nothing and
 * encodes only the sets it changed. Managers and sets reached through these caches are never
 * modified in place (trackUpdate and apply build new ones).
 */
const managersOfEncoded = new WeakMap<object, Manager[]>();
const trieOfSet = new WeakMap<FieldSet, Obj>();

export function decodeManagedFields(v: unknown): Manager[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const known = managersOfEncoded.get(v);
  if (known) return known;
  const out: Manager[] = [];
  for (const raw of v) {
    if (!isObj(raw)) return undefined;
    const manager = typeof raw.manager === 'string' ? raw.manager : '';
    const operation = raw.operation === 'Apply' ? 'Apply' : 'Update';
    const entry: Omit<ManagedFieldsEntry, 'fieldsV1'> = {
      manager,
      operation,
      apiVersion: typeof raw.apiVersion === 'string' ? raw.apiVersion : '',
      fieldsType: 'FieldsV1',
      ...(typeof raw.time === 'string' ? { time: raw.time } : {}),
      ...(typeof raw.subresource === 'string' && raw.subresource ? { subresource: raw.subresource } : {}),
    };
    out.push({ entry, fields: decodeFieldsV1(raw.fieldsV1) });
  }
  managersOfEncoded.set(v, out);
  return out;
}

function trieOf(set: FieldSet): Obj {
  let trie = trieOfSet.get(set);
  if (!trie) {
    trie = encodeFieldsV1(set);
    trieOfSet.set(set, trie);
  }
  return trie;
}

export function encodeManagedFields(managers: Manager[]): ManagedFieldsEntry[] {
  const kept = managers.filter((m) => m.fields.size > 0);
  const encoded = kept.map((m) => {
    const e = m.entry;
    return {
      manager: e.manager,
      operation: e.operation,
      apiVersion: e.apiVersion,
      ...(e.time ? { time: e.time } : {}),
      fieldsType: 'FieldsV1' as const,
      fieldsV1: trieOf(m.fields),
      ...(e.subresource ? { subresource: e.subresource } : {}),
    };
  });
  managersOfEncoded.set(encoded, kept);
  return encoded;
}

function sameManager(
  a: Omit<ManagedFieldsEntry, 'fieldsV1'>,
  b: Omit<ManagedFieldsEntry, 'fieldsV1'>,
): boolean {
  return (
    a.manager === b.manager && a.operation === b.operation && (a.subresource ?? '') === (b.subresource ?? '')
  );
}

export interface WriteInfo {
  manager: string;
  apiVersion: string;
  subresource?: string;
  time: string;
  hints: Hints;
  scope: Scope;
}

/**
 * Ownership after an Update-type write (create, update, non-apply patch): the writer gains what it
 * added or changed, which every other manager loses; removed fields leave every manager.
 */
export function trackUpdate(
  base: Manager[],
  oldObj: Obj | undefined,
  newObj: Obj,
  info: WriteInfo,
): Manager[] {
  const oldSet = oldObj ? fieldSetOf(oldObj, info.hints, info.scope) : new Set<string>();
  const newSet = fieldSetOf(newObj, info.hints, info.scope);
  const changed = new Set<string>();
  for (const p of newSet) {
    if (!oldSet.has(p)) changed.add(p);
    else if (!isContainerPath(p) && !deepEqual(valueAt(oldObj, p), valueAt(newObj, p))) changed.add(p);
  }
  const removed = new Set([...oldSet].filter((p) => !newSet.has(p)));
  const me: Manager['entry'] = {
    manager: info.manager,
    operation: 'Update',
    apiVersion: info.apiVersion,
    time: info.time,
    fieldsType: 'FieldsV1',
    ...(info.subresource ? { subresource: info.subresource } : {}),
  };
  const out: Manager[] = [];
  let mine: Manager | undefined;
  const touches = (fields: FieldSet, paths: Set<string>) => {
    for (const p of paths) if (fields.has(p)) return true;
    return false;
  };
  for (const m of base) {
    if (sameManager(m.entry, me)) {
      const same = !touches(m.fields, removed) && [...changed].every((p) => m.fields.has(p));
      mine = {
        entry: { ...m.entry },
        fields: same ? m.fields : new Set([...m.fields].filter((p) => !removed.has(p))),
      };
      out.push(mine);
      continue;
    }
    // A set the write does not touch stays the same set (and keeps its encoded trie).
    if (!touches(m.fields, removed) && !touches(m.fields, changed)) {
      out.push(m);
      continue;
    }
    const fields = new Set([...m.fields].filter((p) => !removed.has(p)));
    for (const p of changed) fields.delete(p);
    out.push({ entry: m.entry, fields });
  }
  if (changed.size > 0) {
    if (!mine) {
      mine = { entry: me, fields: new Set() };
      out.push(mine);
    }
    if (![...changed].every((p) => mine!.fields.has(p))) mine.fields = new Set([...mine.fields, ...changed]);
    mine.entry = { ...mine.entry, time: info.time, apiVersion: info.apiVersion };
  }
  return out.filter((m) => m.fields.size > 0);
}

/** Keyed and set list items: owned as members, compared by their fields, not as a whole. */
function isContainerPath(p: string): boolean {
  const last = p.slice(p.lastIndexOf(SEP) + 1);
  return last.startsWith('k:') || last.startsWith('v:');
}

export interface ApplyConflict {
  manager: string;
  apiVersion: string;
  /** As rendered in messages: `.spec.replicas`. */
  field: string;
  /** The field-set path, to compare with other field sets. */
  path: string;
}

export interface ApplyResult {
  object: Obj;
  managers: Manager[];
  conflicts: ApplyConflict[];
}

/**
 * Server-side apply of `applied` (already parsed, apiVersion/kind checked) onto `live` (an empty
 * object when creating). Returns conflicts instead of throwing; with `force`, takes ownership.
 */
export function apply(
  live: Obj,
  appliedConfig: Obj,
  base: Manager[],
  info: WriteInfo,
  force: boolean,
): ApplyResult {
  const applied = structuredClone(appliedConfig);
  fillKeyDefaults(applied, [], info.hints, 0);
  const appliedSet = fieldSetOf(applied, info.hints, info.scope);
  const me: Manager['entry'] = {
    manager: info.manager,
    operation: 'Apply',
    apiVersion: info.apiVersion,
    time: info.time,
    fieldsType: 'FieldsV1',
    ...(info.subresource ? { subresource: info.subresource } : {}),
  };
  const previous = base.find((m) => sameManager(m.entry, me))?.fields ?? new Set<string>();
  const others = base
    .filter((m) => !sameManager(m.entry, me))
    .map((m) => ({ entry: m.entry, fields: new Set(m.fields) }));

  const conflicts: ApplyConflict[] = [];
  for (const o of others) {
    for (const p of appliedSet) {
      if (!o.fields.has(p) || isContainerPath(p)) continue;
      if (deepEqual(valueAt(live, p), valueAt(applied, p))) continue;
      conflicts.push({
        manager: o.entry.manager,
        apiVersion: o.entry.apiVersion,
        field: renderPath(p),
        path: p,
      });
      if (force) o.fields.delete(p);
    }
  }
  if (conflicts.length && !force) return { object: live, managers: base, conflicts };

  const object = structuredClone(live);
  // Fields this manager applied before and no longer applies go, unless another manager keeps them.
  const stale = [...previous].filter((p) => !appliedSet.has(p) && !others.some((o) => o.fields.has(p)));
  // Shallowest first: removing a list item takes its fields with it, whereas removing its key
  // fields first would leave the item unfindable.
  stale.sort((a, b) => a.split(SEP).length - b.split(SEP).length);
  for (const p of stale) removeAt(object, p);
  mergeApplied(object, applied, [], info.hints, info.scope, 0, true);

  const managers: Manager[] = [];
  for (const o of others) {
    const kept = new Set([...o.fields].filter((p) => valueAt(object, p) !== undefined));
    if (kept.size) managers.push({ entry: o.entry, fields: kept });
  }
  managers.push({ entry: me, fields: appliedSet });
  return { object, managers: orderManagers(base, managers), conflicts: [] };
}

/**
 * Key fields an item left out take their schema default before matching (a service port without
 * `protocol` is the TCP one), as structured-merge-diff does for defaulted list-map keys.
 */
function fillKeyDefaults(v: unknown, path: string[], hints: Hints, depth: number): void {
  if (depth > MAX_DEPTH) return;
  if (Array.isArray(v)) {
    const list = hints.get(path)?.list;
    for (const item of v) {
      if (!isObj(item)) continue;
      if (list?.type === 'map' && list.defaults) {
        for (const [k, d] of Object.entries(list.defaults)) if (item[k] === undefined) item[k] = d;
      }
      fillKeyDefaults(item, path, hints, depth + 1);
    }
    return;
  }
  if (!isObj(v)) return;
  for (const [k, x] of Object.entries(v)) fillKeyDefaults(x, [...path, k], hints, depth + 1);
}

/** Keeps the order managers had, new ones appended (stable managedFields output). */
function orderManagers(before: Manager[], after: Manager[]): Manager[] {
  const pos = (m: Manager) => before.findIndex((b) => sameManager(b.entry, m.entry));
  return [...after].sort((a, b) => {
    const pa = pos(a);
    const pb = pos(b);
    return (pa < 0 ? Number.MAX_SAFE_INTEGER : pa) - (pb < 0 ? Number.MAX_SAFE_INTEGER : pb);
  });
}

function mergeApplied(
  target: Obj,
  applied: Obj,
  fieldPath: string[],
  hints: Hints,
  scope: Scope,
  depth: number,
  isRoot: boolean,
): void {
  if (depth > MAX_DEPTH) return;
  for (const [k, v] of Object.entries(applied)) {
    if (isRoot) {
      if (k === 'apiVersion' || k === 'kind') continue;
      if (scope.part === 'main' && k === 'status') continue;
      if (scope.part === 'status' && k !== 'status' && k !== 'metadata') continue;
    }
    const path = [...fieldPath, k];
    if (isRoot && k === 'metadata' && isObj(v)) {
      let m = target.metadata;
      if (!isObj(m)) {
        m = {};
        target.metadata = m;
      }
      const metaTarget = m as Obj;
      for (const [mk, mv] of Object.entries(v)) {
        if (IGNORED_META.has(mk)) continue;
        metaTarget[mk] = mergeValue(metaTarget[mk], mv, ['metadata', mk], hints, depth + 1);
      }
      continue;
    }
    target[k] = mergeValue(target[k], v, path, hints, depth + 1);
  }
}

function mergeValue(cur: unknown, v: unknown, path: string[], hints: Hints, depth: number): unknown {
  const hint = hints.get(path);
  if (isObj(v)) {
    if (!isObj(cur) || hint?.atomicMap) return structuredClone(v);
    const out = cur;
    for (const [k, x] of Object.entries(v)) out[k] = mergeValue(out[k], x, [...path, k], hints, depth + 1);
    return out;
  }
  if (Array.isArray(v)) {
    const list = hint?.list;
    if (!list || list.type === 'atomic' || !Array.isArray(cur)) return structuredClone(v);
    const out: unknown[] = cur.slice();
    if (list.type === 'set') {
      for (const x of v) if (!out.some((y) => deepEqual(x, y))) out.push(structuredClone(x));
      return out;
    }
    for (const item of v) {
      if (!isObj(item)) continue;
      const idx = out.findIndex((x) => isObj(x) && list.keys.every((k) => deepEqual(x[k], item[k])));
      if (idx >= 0) out[idx] = mergeValue(out[idx], item, path, hints, depth + 1);
      else out.push(structuredClone(item));
    }
    return out;
  }
  return v;
}
