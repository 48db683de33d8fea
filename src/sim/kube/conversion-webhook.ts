/**
 * A CRD's conversion webhook called as apiextensions-apiserver's webhook converter calls it: one
 * `ConversionReview` per call (apiextensions.k8s.io/v1, or v1beta1 when that is the first version
 * the CRD's `conversionReviewVersions` names), POSTed over HTTPS to `clientConfig.url` or to a
 * Service, the certificate checked against `caBundle`, with kube-apiserver's 30 s timeout; the
 * response checked as it checks it (uid, `result.status`, count, apiVersion, kind, name, namespace,
 * uid; metadata restored from the original but labels and annotations). Every failure is a
 * {@link ConversionWebhookError} whose message is the one kube-apiserver writes.
 */
import { randomUUID } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { asArray, asObj, asString, isObj, metaOf, type Obj } from './json.ts';

/** kube-apiserver's webhook client timeout (the `?timeout=30s` it appends to the URL). */
export const CONVERSION_TIMEOUT_MS = 30_000;
/** A response larger than this is refused rather than buffered (the real client's limit is similar). */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export interface ServiceReference {
  namespace: string;
  name: string;
  path?: string;
  port: number;
}

/** A CRD's `spec.conversion` for strategy Webhook. */
export interface WebhookConversionConfig {
  /** The CRD's name, for messages and counters. */
  crd: string;
  url?: string;
  service?: ServiceReference;
  /** PEM bundle decoded from `caBundle`; system roots when absent. */
  caPem?: string;
  conversionReviewVersions: string[];
}

/**
 * Where a Service's port is reached from the emulator: a base URL (`https://127.0.0.1:9443`), or
 * undefined when it is not reachable. The real apiserver dials the Service's cluster IP; the
 * emulator has no cluster network, so it is told.
 */
export type ServiceResolver = (service: ServiceReference) => string | undefined;

export class ConversionWebhookError extends Error {
  readonly crd: string;
  constructor(crd: string, message: string) {
    super(message);
    this.name = 'ConversionWebhookError';
    this.crd = crd;
  }
}

export interface ConversionCall {
  config: WebhookConversionConfig;
  /** `group/version, Kind=Kind` of what is converted, as Go prints a GroupVersionKind. */
  gvk: string;
  objects: Obj[];
  desiredAPIVersion: string;
  /** A list's items (their errors name an index) rather than one object. */
  list: boolean;
  signal: AbortSignal;
  resolveService?: ServiceResolver;
  /** Whether a Service of that name exists in the cluster (for the "not found" error). */
  serviceExists?: (namespace: string, name: string) => boolean;
  timeoutMs?: number;
}

/** The review version the apiserver sends: the first of the CRD's list it knows. */
export function reviewVersionOf(versions: string[]): 'v1' | 'v1beta1' | undefined {
  for (const v of versions) if (v === 'v1' || v === 'v1beta1') return v;
  return undefined;
}

function target(call: ConversionCall): { url: URL; servername?: string } | string {
  const { config } = call;
  if (config.url) return { url: new URL(config.url) };
  const svc = config.service;
  if (!svc) return 'no clientConfig url or service given';
  const path = svc.path ?? '';
  const display = `https://${svc.name}.${svc.namespace}.svc:${svc.port}${path}`;
  const base = call.resolveService?.(svc);
  if (!base) {
    const exists = call.serviceExists?.(svc.namespace, svc.name) ?? false;
    return `Post "${display}?timeout=30s": ${
      exists ? `no endpoints available for service "${svc.name}"` : `service "${svc.name}" not found`
    }`;
  }
  const url = new URL(base);
  url.pathname = path || '/';
  // The serving certificate names the Service, not the address it is reached on.
  return { url, servername: `${svc.name}.${svc.namespace}.svc` };
}

function post(
  url: URL,
  body: string,
  opts: { caPem?: string; servername?: string; signal: AbortSignal },
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': Buffer.byteLength(body),
        },
        ...(opts.caPem ? { ca: opts.caPem } : {}),
        ...(opts.servername ? { servername: opts.servername } : {}),
        signal: opts.signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) {
            req.destroy(new Error(`response larger than ${MAX_RESPONSE_BYTES} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** What a Go client prints for a failed dial or TLS check, near enough to be recognised. */
function transportText(err: unknown, url: URL, timedOut: boolean): string {
  if (timedOut) return 'context deadline exceeded';
  const e = err as NodeJS.ErrnoException & { reason?: string };
  const host = url.host.includes(':') ? url.host : `${url.hostname}:443`;
  if (e.code === 'ECONNREFUSED') return `dial tcp ${host}: connect: connection refused`;
  if (e.code === 'ENOTFOUND') return `dial tcp: lookup ${url.hostname}: no such host`;
  if (e.code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' || e.code === 'SELF_SIGNED_CERT_IN_CHAIN')
    return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
  if (e.code === 'DEPTH_ZERO_SELF_SIGNED_CERT')
    return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
  if (e.code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `tls: failed to verify certificate: x509: certificate is not valid for ${url.hostname}`;
  return e.message;
}

function parseReview(text: string, reviewVersion: 'v1' | 'v1beta1', uid: string): unknown[] | string {
  let review: unknown;
  try {
    review = JSON.parse(text);
  } catch (err) {
    return `couldn't get version/kind; json parse error: ${(err as Error).message}`;
  }
  if (!isObj(review)) return 'no response provided';
  if (reviewVersion === 'v1') {
    const gvk = `${asString(review.apiVersion) ?? ''}, Kind=${asString(review.kind) ?? ''}`;
    if (review.apiVersion !== 'apiextensions.k8s.io/v1' || review.kind !== 'ConversionReview')
      return `expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got ${gvk}`;
  }
  const response = asObj(review.response);
  if (!response) return 'no response provided';
  if (reviewVersion === 'v1' && asString(response.uid) !== uid)
    return `expected response.uid="${uid}", got "${asString(response.uid) ?? ''}"`;
  const result = asObj(response.result) ?? {};
  if (result.status !== 'Success') {
    const message = asString(result.message);
    if (message) return message;
    return `response.result.status was '${asString(result.status) ?? ''}', not 'Success'`;
  }
  return asArray(response.convertedObjects) ?? [];
}

/** kube-apiserver's validateConvertedObject: what a conversion may never change. */
function invalidChange(original: Obj, converted: Obj): string | undefined {
  const a = metaOf(original);
  const b = metaOf(converted);
  const same = (x: unknown, y: unknown) => (asString(x) ?? '') === (asString(y) ?? '');
  if (!same(original.kind, converted.kind))
    return `must have the same kind: ${asString(original.kind) ?? ''} != ${asString(converted.kind) ?? ''}`;
  if (!same(a.name, b.name))
    return `must have the same name: ${asString(a.name) ?? ''} != ${asString(b.name) ?? ''}`;
  if (!same(a.namespace, b.namespace))
    return `must have the same namespace: ${asString(a.namespace) ?? ''} != ${asString(b.namespace) ?? ''}`;
  if (!same(a.uid, b.uid))
    return `must have the same UID: ${asString(a.uid) ?? ''} != ${asString(b.uid) ?? ''}`;
  return undefined;
}

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * kube-apiserver's restoreObjectMeta: the original's metadata comes back, but for the labels and
 * annotations the webhook returned (string values only, labels valid).
 */
function restoreMeta(original: Obj, converted: Obj): string | undefined {
  const response = converted.metadata;
  if (response === undefined) return 'missing metadata in converted object';
  if (!isObj(response)) return `invalid metadata of type ${typeof response} in converted object`;
  const restored = structuredClone(metaOf(original));
  for (const fld of ['labels', 'annotations'] as const) {
    const got = response[fld];
    if (got === undefined || got === null) {
      delete restored[fld];
      continue;
    }
    if (!isObj(got)) return `invalid metadata.${fld} of type ${typeof got} in converted object`;
    for (const [k, v] of Object.entries(got)) {
      if (typeof v !== 'string')
        return `metadata.${fld}[${k}] must be a string, but is ${typeof v} in converted object`;
      if (fld === 'labels' && (v.length > 63 || !LABEL_VALUE.test(v)))
        return `metadata.labels: Invalid value: "${v}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`;
    }
    restored[fld] = got;
  }
  converted.metadata = restored;
  return undefined;
}

/**
 * Converts `objects` (each in some version other than `desiredAPIVersion`) through the webhook.
 * Returns them in the same order, in the desired version, with their metadata as it was.
 */
export async function callConversionWebhook(call: ConversionCall): Promise<Obj[]> {
  const { config, gvk, objects, desiredAPIVersion } = call;
  const failed = (why: string) =>
    new ConversionWebhookError(config.crd, `conversion webhook for ${gvk} failed: ${why}`);
  const reviewVersion = reviewVersionOf(config.conversionReviewVersions);
  if (!reviewVersion) throw new ConversionWebhookError(config.crd, 'no supported conversion review versions');
  const where = target(call);
  if (typeof where === 'string') throw failed(where);
  const uid = randomUUID();
  const body = JSON.stringify({
    kind: 'ConversionReview',
    apiVersion: `apiextensions.k8s.io/${reviewVersion}`,
    request: { uid, desiredAPIVersion, objects },
  });
  const timeout = AbortSignal.timeout(call.timeoutMs ?? CONVERSION_TIMEOUT_MS);
  const signal = AbortSignal.any([call.signal, timeout]);
  const shown = `${where.url.href}${where.url.search ? '&' : '?'}timeout=30s`;
  let res: { status: number; text: string };
  try {
    res = await post(where.url, body, {
      ...(config.caPem ? { caPem: config.caPem } : {}),
      ...(where.servername ? { servername: where.servername } : {}),
      signal,
    });
  } catch (err) {
    if (call.signal.aborted) throw call.signal.reason;
    throw failed(`Post "${shown}": ${transportText(err, where.url, timeout.aborted)}`);
  }
  if (res.status < 200 || res.status > 299) {
    // client-go's error for a non-2xx answer without a Status body: the body, or the status text.
    throw failed(res.text.trim() || `the server responded with the status code ${res.status}`);
  }
  const parsed = parseReview(res.text, reviewVersion, uid);
  if (typeof parsed === 'string') throw failed(parsed);
  if (parsed.length !== objects.length) {
    throw new ConversionWebhookError(
      config.crd,
      `conversion webhook for ${gvk} returned ${parsed.length} objects, expected ${objects.length}`,
    );
  }
  const single = !call.list;
  return parsed.map((raw, i) => {
    const original = objects[i] as Obj;
    // kube-apiserver counts the item before checking it: its messages name the index plus one.
    const at = single ? 'invalid object' : `invalid converted object at index ${i + 1}`;
    const bad = (why: string) =>
      new ConversionWebhookError(config.crd, `conversion webhook for ${gvk} returned ${at}: ${why}`);
    if (!isObj(raw)) throw bad('not an object');
    const converted = structuredClone(raw);
    const gv = asString(converted.apiVersion) ?? '';
    if (gv !== desiredAPIVersion)
      throw bad(`invalid groupVersion (expected ${desiredAPIVersion}, received ${gv})`);
    if (asString(converted.kind) !== asString(original.kind))
      throw bad(
        `invalid kind (expected ${asString(original.kind) ?? ''}, received ${asString(converted.kind) ?? ''})`,
      );
    const change = invalidChange(original, converted);
    if (change) throw bad(change);
    const metaErr = restoreMeta(original, converted);
    if (metaErr) {
      const where2 = single ? 'invalid metadata' : `invalid metadata in object at index ${i + 1}`;
      throw new ConversionWebhookError(
        config.crd,
        `conversion webhook for ${gvk} returned ${where2}: ${metaErr}`,
      );
    }
    return converted;
  });
}

export interface ServiceEndpoint {
  namespace: string;
  name: string;
  port: number;
  /** The base URL the Service's port is reached at from the emulator. */
  url: string;
}

/** `namespace/name:port=https://host:port` (the `--service-endpoint` of `shiftstack sim kube`). */
export function parseServiceEndpoint(text: string): ServiceEndpoint {
  const m = /^([a-z0-9-]+)\/([a-z0-9-]+):(\d+)=(https:\/\/\S+)$/.exec(text);
  const port = Number(m?.[3]);
  if (!m || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(
      `expected namespace/name:port=https://host:port (a Service's port and where the emulator reaches it), got ${JSON.stringify(text)}`,
    );
  }
  let url: URL;
  try {
    url = new URL(m[4] as string);
  } catch {
    throw new Error(`not a URL: ${JSON.stringify(m[4])}`);
  }
  return { namespace: m[1] as string, name: m[2] as string, port, url: url.origin };
}

/** A resolver answering for the given Service ports and nothing else. */
export function serviceResolverOf(endpoints: ServiceEndpoint[]): ServiceResolver {
  return (svc) =>
    endpoints.find((e) => e.namespace === svc.namespace && e.name === svc.name && e.port === svc.port)?.url;
}
