/**
 * The verbs of a CRD whose `spec.conversion.strategy` is Webhook, as kube-apiserver serves them:
 * objects are stored in the storage version (and keep the version they were stored in until
 * rewritten), and whatever must change version is converted by the CRD's webhook — a write in
 * another version after the strategy has defaulted, pruned and validated it in that version (and
 * before it is pruned against the storage version's schema and stored), a read or watch event of
 * an object stored in another version, a list in one review for all its items. Strategy None never
 * comes here: it keeps {@link Rest}'s synchronous path.
 */
import { callConversionWebhook, ConversionWebhookError, type ServiceResolver } from './conversion-webhook.ts';
import { apiErrors, StatusError } from './errors.ts';
import { asString, isObj, type Obj } from './json.ts';
import type {
  DeleteOptions,
  DeleteResult,
  InternalWrite,
  ListQuery,
  ListResult,
  PatchOptions,
  PatchType,
  Rest,
  WriteResult,
} from './rest.ts';
import { prune } from './schema.ts';
import type { Store } from './store.ts';
import { apiVersionOf, type ResourceDef } from './types.ts';

/**
 * Patches retried when the object changed while their conversion was in flight, at once and at
 * most this often, as etcd's GuaranteedUpdate retries on a stale object.
 */
const PATCH_RETRIES = 5;

export interface ConversionOptions {
  /** Where a webhook's `clientConfig.service` is reached from the emulator. */
  resolveService?: ServiceResolver;
  /** The webhook timeout (kube-apiserver: 30 s). */
  timeoutMs?: number;
}

export interface ConversionStats {
  /** ConversionReviews sent (successful or not). */
  reviews: number;
  /** Objects sent in them. */
  objects: number;
  /** Reviews that failed (transport, refusal or an invalid response). */
  failures: number;
}

interface Deps {
  rest: Rest;
  store: Store;
  /** Whether a Service exists (the "service not found" error of an unreachable webhook). */
  serviceExists(namespace: string, name: string): boolean;
}

type ErrorForm = 'read' | 'write';

export class WebhookConversions {
  readonly stats: ConversionStats = { reviews: 0, objects: 0, failures: 0 };
  private readonly deps: Deps;
  private readonly options: ConversionOptions;

  constructor(deps: Deps, options: ConversionOptions = {}) {
    this.deps = deps;
    this.options = options;
  }

  /** `objects` in `def`'s version: those stored in another one go to the webhook, in one review. */
  async toVersion(def: ResourceDef, objects: Obj[], signal: AbortSignal, list = false): Promise<Obj[]> {
    const want = apiVersionOf(def);
    const at: number[] = [];
    objects.forEach((o, i) => {
      if (o.apiVersion !== want) at.push(i);
    });
    if (at.length === 0) return objects;
    const converted = await this.convert(
      def,
      at.map((i) => objects[i] as Obj),
      want,
      signal,
      list,
      'read',
    );
    const out = objects.slice();
    at.forEach((i, k) => (out[i] = converted[k] as Obj));
    return out;
  }

  private async one(def: ResourceDef, o: Obj, signal: AbortSignal): Promise<Obj> {
    return (await this.toVersion(def, [o], signal))[0] as Obj;
  }

  private async convert(
    def: ResourceDef,
    objects: Obj[],
    desiredAPIVersion: string,
    signal: AbortSignal,
    list: boolean,
    form: ErrorForm,
  ): Promise<Obj[]> {
    const wc = def.webhookConversion;
    if (!wc) throw new Error(`${def.resource}.${def.group} has no conversion webhook`);
    const from = asString(objects[0]?.apiVersion) ?? '';
    this.stats.reviews++;
    this.stats.objects += objects.length;
    let converted: Obj[];
    try {
      converted = await callConversionWebhook({
        config: wc.config,
        gvk: `${from}, Kind=${list ? def.listKind : def.kind}`,
        objects,
        desiredAPIVersion,
        list,
        signal,
        ...(this.options.resolveService ? { resolveService: this.options.resolveService } : {}),
        serviceExists: (ns, name) => this.deps.serviceExists(ns, name),
        ...(this.options.timeoutMs !== undefined ? { timeoutMs: this.options.timeoutMs } : {}),
      });
    } catch (err) {
      this.stats.failures++;
      if (err instanceof ConversionWebhookError) throw statusOf(err, form);
      throw err;
    }
    // kube-apiserver's schema coercion after a conversion: what the target version does not
    // declare is dropped.
    const schema = wc.schemas[desiredAPIVersion.slice(desiredAPIVersion.indexOf('/') + 1)];
    if (schema) for (const o of converted) prune(schema, o);
    return converted;
  }

  /* -------------------------------------------------------------------- reads */

  async get(def: ResourceDef, namespace: string, name: string, signal: AbortSignal): Promise<Obj> {
    return this.one(def, this.deps.rest.get(def, namespace, name), signal);
  }

  async list(
    def: ResourceDef,
    namespace: string | undefined,
    q: ListQuery,
    signal: AbortSignal,
  ): Promise<ListResult> {
    const r = this.deps.rest.list(def, namespace, q);
    const items = await this.toVersion(def, r.items, signal, true);
    return { list: { ...r.list, items }, items };
  }

  /** A watch event's object in `def`'s version. */
  event(def: ResourceDef, stored: Obj, signal: AbortSignal): Obj | Promise<Obj> {
    const o = this.deps.rest.out(def, stored);
    return o.apiVersion === apiVersionOf(def) ? o : this.one(def, o, signal);
  }

  /* ------------------------------------------------------------------- writes */

  create(
    def: ResourceDef,
    namespace: string,
    body: unknown,
    opts: InternalWrite,
    signal: AbortSignal,
  ): Promise<WriteResult> {
    return this.write(def, undefined, signal, false, (live) =>
      this.deps.rest.create(def, namespace, body, { ...opts, deferStorage: true, live }),
    );
  }

  update(
    def: ResourceDef,
    namespace: string,
    name: string,
    body: unknown,
    opts: InternalWrite,
    signal: AbortSignal,
  ): Promise<WriteResult> {
    return this.write(def, { namespace, name }, signal, false, (live) =>
      this.deps.rest.update(def, namespace, name, body, { ...opts, deferStorage: true, live }),
    );
  }

  patch(
    def: ResourceDef,
    namespace: string,
    name: string,
    type: PatchType,
    raw: string,
    opts: PatchOptions & InternalWrite,
    signal: AbortSignal,
  ): Promise<WriteResult> {
    return this.write(def, { namespace, name }, signal, true, (live) =>
      this.deps.rest.patch(def, namespace, name, type, raw, { ...opts, deferStorage: true, live }),
    );
  }

  /**
   * Runs a write in the request's version against the live object in that version; converts what
   * it prepared to the storage version and stores it; answers in the request's version.
   */
  private async write(
    def: ResourceDef,
    target: { namespace: string; name: string } | undefined,
    signal: AbortSignal,
    retry: boolean,
    run: (live: Obj | undefined) => WriteResult,
  ): Promise<WriteResult> {
    const wc = def.webhookConversion;
    if (!wc) throw new Error(`${def.resource}.${def.group} has no conversion webhook`);
    for (let attempt = 0; ; attempt++) {
      let live: Obj | undefined;
      if (target) {
        const stored = this.deps.rest.getStored(def, target.namespace, target.name);
        live = stored ? await this.one(def, this.deps.rest.out(def, stored), signal) : undefined;
      }
      const r = run(live);
      if (!r.pending) return { ...r, object: await this.one(def, r.object, signal) };
      const storage = `${def.group}/${wc.storageVersion}`;
      const [converted] = await this.convert(def, [r.pending.object], storage, signal, false, 'write');
      let committed: WriteResult;
      try {
        committed = this.deps.rest.commit(def, r.pending, converted as Obj);
      } catch (err) {
        // The object changed while the webhook answered: a patch starts again from the new one.
        const stale = err instanceof StatusError && err.code === 409 && r.pending.oldRv !== undefined;
        if (stale && retry && attempt < PATCH_RETRIES) continue;
        throw err;
      }
      return { ...committed, object: await this.one(def, committed.object, signal) };
    }
  }

  async delete(
    def: ResourceDef,
    namespace: string,
    name: string,
    opts: DeleteOptions,
    signal: AbortSignal,
  ): Promise<DeleteResult> {
    const r = this.deps.rest.delete(def, namespace, name, opts);
    if (!isObj(r.body) || r.body.kind !== def.kind) return r;
    return { ...r, body: await this.one(def, r.body, signal) };
  }

  async deleteCollection(
    def: ResourceDef,
    namespace: string | undefined,
    q: ListQuery,
    opts: DeleteOptions,
    signal: AbortSignal,
  ): Promise<Obj> {
    const list = this.deps.rest.deleteCollection(def, namespace, q, opts);
    const items = Array.isArray(list.items) ? (list.items as Obj[]) : [];
    return { ...list, items: await this.toVersion(def, items, signal, true) };
  }
}

/**
 * The Status a client sees: a read answers kube-apiserver's storage error (500 InternalError,
 * "Internal error occurred: …"); a write the encoder's error as it is (500, no reason).
 */
function statusOf(err: ConversionWebhookError, form: ErrorForm): StatusError {
  if (form === 'read') return apiErrors.internal(err.message);
  const e = new StatusError(500, 'InternalError', err.message);
  delete e.status.reason;
  return e;
}
