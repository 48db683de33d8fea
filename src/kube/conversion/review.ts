/**
 * One ConversionReview answered, as controller-runtime's conversion webhook answers it: every
 * object of the request converted to `desiredAPIVersion` by the `KindConversion` of its group and
 * kind, or — if any one cannot be — none, and `result` a Failure whose message says which object
 * and why (the API server passes that message on to its client). The review's own apiVersion
 * (apiextensions.k8s.io/v1 or v1beta1) is echoed, as the API server decodes the answer in the
 * version it asked in.
 */
import { ConversionError, type ConvertibleObject, type KindConversion } from './types.ts';

export const CONVERSION_REVIEW_VERSIONS = ['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'];

export interface ConversionReviewRequest {
  uid: string;
  desiredAPIVersion: string;
  objects: unknown[];
}

export interface ConversionReviewResponse {
  uid: string;
  convertedObjects: ConvertibleObject[];
  result: { status: 'Success' } | { status: 'Failure'; message: string };
}

export interface ConversionReview {
  apiVersion: string;
  kind: 'ConversionReview';
  request?: ConversionReviewRequest;
  response?: ConversionReviewResponse;
}

/** A body that is no ConversionReview at all: the server answers 400, as controller-runtime does. */
export class BadReviewError extends Error {
  override readonly name = 'BadReviewError';
}

/** What each object's conversion came to, for metrics and logs. */
export interface ObjectOutcome {
  group: string;
  kind: string;
  from: string;
  to: string;
  result: 'success' | 'failure';
}

export interface ReviewAnswer {
  review: ConversionReview;
  outcomes: ObjectOutcome[];
  /** The Failure's cause, when there is one. */
  error?: Error;
}

/** The conversions by `<kind>.<group>`; two for one kind is a programming error. */
export function conversionTable(conversions: readonly KindConversion[]): Map<string, KindConversion> {
  const table = new Map<string, KindConversion>();
  for (const c of conversions) {
    const key = `${c.kind}.${c.group}`;
    if (table.has(key)) throw new Error(`two conversions for ${key}`);
    table.set(key, c);
  }
  return table;
}

/** Reads a request body as a ConversionReview with a request; throws BadReviewError otherwise. */
export function parseReview(body: string): ConversionReview & { request: ConversionReviewRequest } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    throw new BadReviewError(`the body is not JSON: ${(err as Error).message}`);
  }
  if (!isRecord(parsed) || parsed['kind'] !== 'ConversionReview') {
    throw new BadReviewError('the body is not a ConversionReview');
  }
  const apiVersion = parsed['apiVersion'];
  if (typeof apiVersion !== 'string' || !CONVERSION_REVIEW_VERSIONS.includes(apiVersion)) {
    throw new BadReviewError(
      `ConversionReview ${String(apiVersion)} is not served; send one of ${CONVERSION_REVIEW_VERSIONS.join(', ')}`,
    );
  }
  const request = parsed['request'];
  if (!isRecord(request)) throw new BadReviewError('the ConversionReview has no request');
  const { uid, desiredAPIVersion, objects } = request;
  if (typeof uid !== 'string' || typeof desiredAPIVersion !== 'string' || !Array.isArray(objects)) {
    throw new BadReviewError('the ConversionReview request needs uid, desiredAPIVersion and objects');
  }
  return { apiVersion, kind: 'ConversionReview', request: { uid, desiredAPIVersion, objects } };
}

/** The answer to `review`: all objects converted, or a Failure naming the first that was not. */
export function answerReview(
  review: ConversionReview & { request: ConversionReviewRequest },
  table: ReadonlyMap<string, KindConversion>,
): ReviewAnswer {
  const { uid, desiredAPIVersion, objects } = review.request;
  const outcomes: ObjectOutcome[] = [];
  const converted: ConvertibleObject[] = [];
  const answer = (response: ConversionReviewResponse, error?: Error): ReviewAnswer => ({
    review: { apiVersion: review.apiVersion, kind: 'ConversionReview', response },
    outcomes,
    ...(error ? { error } : {}),
  });
  const [toGroup, toVersion] = splitApiVersion(desiredAPIVersion);
  for (const obj of objects) {
    const outcome: ObjectOutcome = { group: toGroup, kind: '', from: '', to: toVersion, result: 'failure' };
    try {
      const result = convertOne(obj, toGroup, toVersion, desiredAPIVersion, table, outcome);
      converted.push(result);
      outcome.result = 'success';
      outcomes.push(outcome);
    } catch (err) {
      outcomes.push(outcome);
      const error = err instanceof Error ? err : new Error(String(err));
      return answer(
        { uid, convertedObjects: [], result: { status: 'Failure', message: error.message } },
        error,
      );
    }
  }
  return answer({ uid, convertedObjects: converted, result: { status: 'Success' } });
}

function convertOne(
  obj: unknown,
  toGroup: string,
  toVersion: string,
  desiredAPIVersion: string,
  table: ReadonlyMap<string, KindConversion>,
  outcome: ObjectOutcome,
): ConvertibleObject {
  if (!isRecord(obj) || typeof obj['apiVersion'] !== 'string' || typeof obj['kind'] !== 'string') {
    throw new ConversionError('an object without apiVersion and kind cannot be converted', { kind: '' });
  }
  const object = obj as ConvertibleObject;
  const [group, fromVersion] = splitApiVersion(object.apiVersion);
  outcome.group = group;
  outcome.kind = object.kind;
  outcome.from = fromVersion;
  const ref = objectRef(object);
  const name = `${object.kind}.${group} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name ?? ''}`.trim();
  if (group !== toGroup) {
    throw new ConversionError(`${name}: cannot convert ${object.apiVersion} to ${desiredAPIVersion}`, ref);
  }
  const conversion = table.get(`${object.kind}.${group}`);
  if (!conversion) {
    throw new ConversionError(`${name}: this webhook converts no ${object.kind}.${group}`, ref);
  }
  for (const v of [fromVersion, toVersion]) {
    if (!conversion.versions.includes(v)) {
      throw new ConversionError(
        `${name}: ${group}/${v} is not a version of ${object.kind} (${conversion.versions.join(', ')})`,
        ref,
      );
    }
  }
  // The API server sends only what needs converting; an object already there is returned as is.
  if (fromVersion === toVersion) return object;
  const out = conversion.convert(object, toVersion);
  if (out.apiVersion !== desiredAPIVersion || out.kind !== object.kind) {
    throw new Error(
      `${name}: the ${object.kind} conversion returned ${out.apiVersion} ${out.kind}, not ${desiredAPIVersion} ${object.kind}`,
    );
  }
  return out;
}

function objectRef(obj: ConvertibleObject): ConversionError['object'] {
  const meta = isRecord(obj['metadata']) ? obj['metadata'] : {};
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return { kind: obj.kind, namespace: str(meta['namespace']), name: str(meta['name']) };
}

/** `group/version` (a core `v1` has the empty group). */
function splitApiVersion(apiVersion: string): [string, string] {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
