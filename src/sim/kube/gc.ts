/**
 * The controllers a bare API server needs to keep its own semantics, run in-process off the
 * store's change feed:
 *
 * - garbage collector: dependents of a deleted owner are deleted (background) or, when other
 *   owners remain, lose the reference; Foreground deletion deletes dependents first and removes
 *   the `foregroundDeletion` finalizer once no dependent with `blockOwnerDeletion` is left;
 *   Orphan deletion strips the owner reference from dependents and removes `orphan`; a dependent
 *   whose owners never existed (or have another uid) is collected as well;
 * - namespace lifecycle: a terminating namespace has its content deleted, reports what remains
 *   in its conditions, and is finalized once empty;
 * - CRDs: served versions registered as a CRD is written, NamesAccepted/Established set,
 *   instances deleted before the cleanup finalizer is released, versions unregistered after.
 *
 * Work is queued and drained on `setImmediate` turns, a bounded batch at a time, so requests
 * keep flowing; {@link Controllers.settle} waits for the queue to drain (tests).
 */
import type { Logger } from 'pino';
import { crdStatusUpdate, crResourceDefs, CRD_CLEANUP_FINALIZER } from './crd.ts';
import { StatusError } from './errors.ts';
import { asArray, asObj, asString, metaOf, nameOf, namespaceOf, stringList, type Obj } from './json.ts';
import type { Registry } from './registry.ts';
import { timestamp, type Rest } from './rest.ts';
import { objectKey, type Store, type StoreEvent } from './store.ts';
import type { ResourceDef } from './types.ts';

const MANAGER = 'kube-controller-manager';
const BATCH = 200;

interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  blockOwnerDeletion: boolean;
}

type Work =
  | { kind: 'dependent'; storageKey: string; key: string }
  | { kind: 'owner'; storageKey: string; key: string }
  | { kind: 'namespace'; name: string }
  | { kind: 'crd'; name: string };

function refsOf(o: Obj): OwnerRef[] {
  return (asArray(metaOf(o).ownerReferences) ?? [])
    .map(asObj)
    .filter((r): r is Obj => !!r)
    .map((r) => ({
      apiVersion: asString(r.apiVersion) ?? '',
      kind: asString(r.kind) ?? '',
      name: asString(r.name) ?? '',
      uid: asString(r.uid) ?? '',
      blockOwnerDeletion: r.blockOwnerDeletion === true,
    }));
}

export class Controllers {
  private readonly store: Store;
  private readonly registry: Registry;
  private readonly rest: Rest;
  private readonly log: Logger | undefined;
  private readonly now: () => Date;
  private readonly queue: Work[] = [];
  private readonly queued = new Set<string>();
  /** owner uid → dependents (`storageKey|key`). */
  private readonly dependents = new Map<string, Set<string>>();
  private scheduled: NodeJS.Immediate | undefined;
  private waiters: (() => void)[] = [];
  /** Namespaces whose content deletion has started, after the discovery delay. */
  private readonly namespacesStarted = new Set<string>();
  /** Namespaces waiting out the delay, and their timers. */
  private readonly delays = new Map<string, NodeJS.Timeout>();
  private readonly namespaceDelayMs: number;
  private stopped = false;
  private readonly unsubscribe: () => void;

  constructor(deps: {
    store: Store;
    registry: Registry;
    rest: Rest;
    log?: Logger;
    now: () => Date;
    /** How long a terminating namespace waits before its content goes (the real controller's discovery). */
    namespaceDelayMs?: number;
  }) {
    this.store = deps.store;
    this.namespaceDelayMs = deps.namespaceDelayMs ?? 0;
    this.registry = deps.registry;
    this.rest = deps.rest;
    this.log = deps.log;
    this.now = deps.now;
    this.unsubscribe = this.store.subscribe((e) => this.observe(e));
  }

  stop(): void {
    this.stopped = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    for (const t of this.delays.values()) clearTimeout(t);
    this.delays.clear();
    this.unsubscribe();
    this.release();
  }

  /**
   * Resolves once every queued piece of work (and what it caused) is done; rejects after
   * `timeoutMs` if work keeps coming (a controller fighting a client), naming what is queued.
   */
  settle(timeoutMs = 10_000): Promise<void> {
    if (this.idle()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        reject(
          new Error(
            `kube emulator controllers still busy after ${timeoutMs} ms: ${this.queue.map(workId).slice(0, 5).join(', ')}`,
          ),
        );
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.waiters.push(done);
    });
  }

  private idle(): boolean {
    return this.queue.length === 0 && !this.scheduled && this.delays.size === 0;
  }

  private release(): void {
    if (!this.idle()) return;
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }

  private enqueue(w: Work): void {
    if (this.stopped) return;
    const id = workId(w);
    if (this.queued.has(id)) return;
    this.queued.add(id);
    this.queue.push(w);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = undefined;
      this.drain();
    });
  }

  private drain(): void {
    for (let i = 0; i < BATCH && this.queue.length; i++) {
      const w = this.queue.shift() as Work;
      this.queued.delete(workId(w));
      try {
        this.process(w);
      } catch (err) {
        // Conflicts and races with clients are normal; the next change re-queues the work.
        if (!(err instanceof StatusError)) this.log?.error({ err }, 'kube emulator controller failed');
        else this.log?.debug({ err: err.message, work: w.kind }, 'kube emulator controller retry later');
      }
    }
    if (this.queue.length) this.schedule();
    else this.release();
  }

  /**
   * A namespace that starts terminating is handled after `namespaceDelayMs`: the real namespace
   * controller needs discovery and lists first, so `kubectl delete -f` of a namespace and its
   * objects finds them still there, as it does on a real cluster.
   */
  private namespaceTerminating(name: string): void {
    if (this.namespacesStarted.has(name)) {
      this.enqueue({ kind: 'namespace', name });
      return;
    }
    if (this.namespaceDelayMs <= 0) {
      this.namespacesStarted.add(name);
      this.enqueue({ kind: 'namespace', name });
      return;
    }
    if (this.delays.has(name)) return;
    const timer = setTimeout(() => {
      this.delays.delete(name);
      this.namespacesStarted.add(name);
      this.enqueue({ kind: 'namespace', name });
    }, this.namespaceDelayMs);
    this.delays.set(name, timer);
  }

  /** Indexes owner references and queues the work a change implies. */
  private observe(e: StoreEvent): void {
    const id = `${e.storageKey}|${e.key}`;
    const before = e.prev ? refsOf(e.prev) : [];
    const after = e.type === 'DELETED' ? [] : refsOf(e.object);
    for (const r of before) if (!after.some((a) => a.uid === r.uid)) this.dependents.get(r.uid)?.delete(id);
    for (const r of after) {
      let set = this.dependents.get(r.uid);
      if (!set) {
        set = new Set();
        this.dependents.set(r.uid, set);
      }
      set.add(id);
    }
    if (after.length) this.enqueue({ kind: 'dependent', storageKey: e.storageKey, key: e.key });

    const m = metaOf(e.object);
    const uid = asString(m.uid) ?? '';
    if (e.type === 'DELETED') {
      for (const dep of this.dependents.get(uid) ?? []) {
        const [storageKey = '', key = ''] = dep.split('|');
        this.enqueue({ kind: 'dependent', storageKey, key });
      }
      this.dependents.delete(uid);
    } else if (m.deletionTimestamp) {
      const fin = stringList(m.finalizers);
      if (fin.includes('foregroundDeletion') || fin.includes('orphan')) {
        this.enqueue({ kind: 'owner', storageKey: e.storageKey, key: e.key });
      }
    }
    // A dependent going away may unblock an owner in foreground deletion.
    if (e.type === 'DELETED' || m.deletionTimestamp) {
      for (const r of before) this.requeueOwner(r, namespaceOf(e.object));
    }

    if (e.storageKey === '/namespaces') {
      if (e.type !== 'DELETED' && m.deletionTimestamp) this.namespaceTerminating(nameOf(e.object));
      if (e.type === 'DELETED') this.namespacesStarted.delete(nameOf(e.object));
    } else {
      const ns = namespaceOf(e.object);
      if (ns && e.type === 'DELETED') {
        const nsObj = this.store.get('/namespaces', objectKey('', ns));
        if (nsObj && metaOf(nsObj).deletionTimestamp) this.namespaceTerminating(ns);
      }
    }
    if (e.storageKey === 'apiextensions.k8s.io/customresourcedefinitions') {
      // Registering synchronously makes a new CRD's resources servable in the next request.
      this.syncCrdServing(e.object, e.type === 'DELETED');
      if (e.type !== 'DELETED') this.enqueue({ kind: 'crd', name: nameOf(e.object) });
    }
    if (e.storageKey !== 'apiextensions.k8s.io/customresourcedefinitions' && e.type === 'DELETED') {
      const def = this.storageDef(e.storageKey);
      if (def?.crd) {
        const crd = this.store.get('apiextensions.k8s.io/customresourcedefinitions', objectKey('', def.crd));
        if (crd && metaOf(crd).deletionTimestamp) this.enqueue({ kind: 'crd', name: def.crd });
      }
    }
  }

  private requeueOwner(r: OwnerRef, namespace: string): void {
    const def = this.ownerDef(r);
    if (!def) return;
    const key = objectKey(def.namespaced ? namespace : '', r.name);
    const owner = this.store.get(def.storageKey, key);
    if (owner && metaOf(owner).deletionTimestamp)
      this.enqueue({ kind: 'owner', storageKey: def.storageKey, key });
  }

  private storageDef(storageKey: string): ResourceDef | undefined {
    return this.registry.storages().find((d) => d.storageKey === storageKey);
  }

  private ownerDef(r: OwnerRef): ResourceDef | undefined {
    const slash = r.apiVersion.indexOf('/');
    const group = slash < 0 ? '' : r.apiVersion.slice(0, slash);
    return this.registry.byKind(r.apiVersion, r.kind) ?? this.registry.byGroupKind(group, r.kind);
  }

  private process(w: Work): void {
    switch (w.kind) {
      case 'dependent':
        return this.processDependent(w.storageKey, w.key);
      case 'owner':
        return this.processOwner(w.storageKey, w.key);
      case 'namespace':
        return this.processNamespace(w.name);
      case 'crd':
        return this.processCrd(w.name);
    }
  }

  /** GC's `attemptToDeleteItem`: collect a dependent whose owners are all gone. */
  private processDependent(storageKey: string, key: string): void {
    const obj = this.store.get(storageKey, key);
    const def = this.storageDef(storageKey);
    if (!obj || !def) return;
    const refs = refsOf(obj);
    if (refs.length === 0 || metaOf(obj).deletionTimestamp) return;
    const ns = namespaceOf(obj);
    const solid: OwnerRef[] = [];
    const dangling: OwnerRef[] = [];
    const waiting: OwnerRef[] = [];
    for (const r of refs) {
      const od = this.ownerDef(r);
      if (!od) {
        // An owner kind nobody serves cannot be checked; the real GC leaves such dependents alone.
        solid.push(r);
        continue;
      }
      const owner = this.store.get(od.storageKey, objectKey(od.namespaced ? ns : '', r.name));
      if (!owner || asString(metaOf(owner).uid) !== r.uid) dangling.push(r);
      else if (
        metaOf(owner).deletionTimestamp &&
        stringList(metaOf(owner).finalizers).includes('foregroundDeletion')
      ) {
        waiting.push(r);
      } else solid.push(r);
    }
    if (solid.length) {
      const drop = [...dangling, ...waiting].map((r) => r.uid);
      if (drop.length) this.dropRefs(def, obj, drop);
      return;
    }
    if (dangling.length === 0 && waiting.length === 0) return;
    const fin = stringList(metaOf(obj).finalizers);
    const policy = waiting.length
      ? 'Foreground'
      : fin.includes('orphan')
        ? 'Orphan'
        : fin.includes('foregroundDeletion')
          ? 'Foreground'
          : 'Background';
    this.rest.delete(def, ns, nameOf(obj), {
      propagationPolicy: policy,
      preconditions: { uid: asString(metaOf(obj).uid) ?? '' },
    });
  }

  private dropRefs(def: ResourceDef, obj: Obj, uids: string[]): void {
    const refs = (asArray(metaOf(obj).ownerReferences) ?? []).filter(
      (r) => !uids.includes(asString(asObj(r)?.uid) ?? ''),
    );
    const patch = JSON.stringify({
      metadata: {
        ownerReferences: refs.length ? refs : null,
        uid: metaOf(obj).uid,
        resourceVersion: metaOf(obj).resourceVersion,
      },
    });
    this.rest.patch(def, namespaceOf(obj), nameOf(obj), 'merge', patch, {
      manager: MANAGER,
      subresource: '',
    });
  }

  /** An owner being deleted in the foreground or with orphaning. */
  private processOwner(storageKey: string, key: string): void {
    const owner = this.store.get(storageKey, key);
    const def = this.storageDef(storageKey);
    if (!owner || !def) return;
    const m = metaOf(owner);
    if (!m.deletionTimestamp) return;
    const uid = asString(m.uid) ?? '';
    const fin = stringList(m.finalizers);
    const deps = [...(this.dependents.get(uid) ?? [])]
      .map((d) => {
        const [sk = '', k = ''] = d.split('|');
        return { def: this.storageDef(sk), obj: this.store.get(sk, k) };
      })
      .filter((d): d is { def: ResourceDef; obj: Obj } => !!d.def && !!d.obj);
    if (fin.includes('orphan')) {
      for (const d of deps) this.dropRefs(d.def, d.obj, [uid]);
      this.removeFinalizer(def, owner, 'orphan');
      return;
    }
    if (fin.includes('foregroundDeletion')) {
      let blocking = 0;
      for (const d of deps) {
        const ref = refsOf(d.obj).find((r) => r.uid === uid);
        if (ref?.blockOwnerDeletion) blocking++;
        if (!metaOf(d.obj).deletionTimestamp)
          this.processDependent(
            d.def.storageKey,
            objectKey(d.def.namespaced ? namespaceOf(d.obj) : '', nameOf(d.obj)),
          );
      }
      if (blocking === 0) this.removeFinalizer(def, owner, 'foregroundDeletion');
    }
  }

  private removeFinalizer(def: ResourceDef, obj: Obj, finalizer: string): void {
    const fin = stringList(metaOf(obj).finalizers).filter((f) => f !== finalizer);
    const patch = JSON.stringify({
      metadata: { finalizers: fin.length ? fin : null, resourceVersion: metaOf(obj).resourceVersion },
    });
    this.rest.patch(def, namespaceOf(obj), nameOf(obj), 'merge', patch, {
      manager: MANAGER,
      subresource: '',
    });
  }

  /** The namespace controller: delete content, report what remains, finalize when empty. */
  private processNamespace(name: string): void {
    const nsDef = this.registry.get('', 'v1', 'namespaces');
    if (!nsDef) return;
    const ns = this.store.get(nsDef.storageKey, objectKey('', name));
    if (!ns || !metaOf(ns).deletionTimestamp) return;
    const remaining = new Map<string, number>();
    const finalizers = new Map<string, number>();
    for (const def of this.registry.storages()) {
      if (!def.namespaced) continue;
      for (const key of [...this.store.keys(def.storageKey, name)]) {
        const o = this.store.get(def.storageKey, key);
        if (!o) continue;
        if (!metaOf(o).deletionTimestamp) {
          try {
            this.rest.delete(def, name, nameOf(o), { propagationPolicy: 'Background' });
          } catch (err) {
            if (!(err instanceof StatusError && err.code === 404)) throw err;
          }
        }
        const still = this.store.get(def.storageKey, key);
        if (still) {
          const label = `${def.resource}${def.group ? `.${def.group}` : '.'}`;
          remaining.set(label, (remaining.get(label) ?? 0) + 1);
          for (const f of stringList(metaOf(still).finalizers))
            finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
        }
      }
    }
    const fresh = this.store.get(nsDef.storageKey, objectKey('', name));
    if (!fresh) return;
    if (remaining.size === 0) {
      const specFin = stringList(asObj(fresh.spec)?.finalizers);
      if (specFin.includes('kubernetes')) {
        const next = structuredClone(fresh);
        next.spec = { ...(asObj(next.spec) ?? {}), finalizers: specFin.filter((f) => f !== 'kubernetes') };
        this.rest.update(nsDef, '', name, this.rest.out(nsDef, next), {
          manager: MANAGER,
          subresource: 'finalize',
        });
      }
      return;
    }
    const conditions = namespaceConditions(
      remaining,
      finalizers,
      timestamp(this.now()),
      asArray(asObj(fresh.status)?.conditions) ?? [],
    );
    const status = { ...(asObj(fresh.status) ?? {}), phase: 'Terminating', conditions };
    if (JSON.stringify(status) !== JSON.stringify(fresh.status)) {
      const next = { ...this.rest.out(nsDef, fresh), status };
      this.rest.update(nsDef, '', name, next, { manager: MANAGER, subresource: 'status' });
    }
  }

  /** Keeps the registry in step with a CRD's served versions. */
  private syncCrdServing(crd: Obj, deleted: boolean): void {
    const spec = asObj(crd.spec) ?? {};
    const group = asString(spec.group) ?? '';
    const plural = asString(asObj(spec.names)?.plural) ?? '';
    if (!group || !plural) return;
    this.registry.removeResource(group, plural);
    if (deleted) return;
    for (const def of crResourceDefs(crd)) this.registry.add(def);
  }

  private processCrd(name: string): void {
    const crdDef = this.registry.get('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
    if (!crdDef) return;
    const crd = this.store.get(crdDef.storageKey, objectKey('', name));
    if (!crd) return;
    if (metaOf(crd).deletionTimestamp) {
      this.cleanupCrd(crdDef, crd);
      return;
    }
    const status = crdStatusUpdate(crd, timestamp(this.now()));
    if (status) {
      this.rest.update(
        crdDef,
        '',
        name,
        { ...this.rest.out(crdDef, crd), status },
        { manager: 'kube-apiserver', subresource: 'status' },
      );
    }
  }

  /** Deletes every instance, then lets the CRD go. */
  private cleanupCrd(crdDef: ResourceDef, crd: Obj): void {
    const spec = asObj(crd.spec) ?? {};
    const storageKey = `${asString(spec.group) ?? ''}/${asString(asObj(spec.names)?.plural) ?? ''}`;
    const def = this.storageDef(storageKey);
    let left = 0;
    if (def) {
      for (const key of [...this.store.keys(storageKey)]) {
        const o = this.store.get(storageKey, key);
        if (!o) continue;
        if (!metaOf(o).deletionTimestamp) {
          try {
            this.rest.delete(def, namespaceOf(o), nameOf(o), { propagationPolicy: 'Background' });
          } catch (err) {
            if (!(err instanceof StatusError && err.code === 404)) throw err;
          }
        }
        if (this.store.get(storageKey, key)) left++;
      }
    }
    if (left === 0 && stringList(metaOf(crd).finalizers).includes(CRD_CLEANUP_FINALIZER)) {
      this.removeFinalizer(crdDef, crd, CRD_CLEANUP_FINALIZER);
    }
  }
}

function workId(w: Work): string {
  return w.kind === 'namespace' || w.kind === 'crd'
    ? `${w.kind}|${w.name}`
    : `${w.kind}|${w.storageKey}|${w.key}`;
}

function namespaceConditions(
  remaining: Map<string, number>,
  finalizers: Map<string, number>,
  now: string,
  previous: unknown[],
): Obj[] {
  const prev = previous.map(asObj).filter((c): c is Obj => !!c);
  const cond = (type: string, status: string, reason: string, message: string): Obj => {
    const old = prev.find((c) => c.type === type);
    const same = old && old.status === status && old.message === message;
    return { type, status, lastTransitionTime: same ? old.lastTransitionTime : now, reason, message };
  };
  const res = [...remaining]
    .sort()
    .map(([r, n]) => `${r} has ${n} resource instances`)
    .join(', ');
  const fins = [...finalizers]
    .sort()
    .map(([f, n]) => `${f} in ${n} resource instances`)
    .join(', ');
  return [
    cond(
      'NamespaceDeletionDiscoveryFailure',
      'False',
      'ResourcesDiscovered',
      'All resources successfully discovered',
    ),
    cond(
      'NamespaceDeletionGroupVersionParsingFailure',
      'False',
      'ParsedGroupVersions',
      'All legacy kube types successfully parsed',
    ),
    cond(
      'NamespaceDeletionContentFailure',
      'False',
      'ContentDeleted',
      'All content successfully deleted, may be waiting on finalization',
    ),
    cond('NamespaceContentRemaining', 'True', 'SomeResourcesRemain', `Some resources are remaining: ${res}`),
    finalizers.size
      ? cond(
          'NamespaceFinalizersRemaining',
          'True',
          'SomeFinalizersRemain',
          `Some content in the namespace has finalizers remaining: ${fins}`,
        )
      : cond(
          'NamespaceFinalizersRemaining',
          'False',
          'ContentHasNoFinalizers',
          'All content-preserving finalizers finished',
        ),
  ];
}
