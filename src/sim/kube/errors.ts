/**
 * API errors as the real server renders them: a `metav1.Status` body with the same reason, code,
 * message wording and details (kind, group, name, causes), because clients branch on them
 * (`apierrors.IsConflict`, client-node's `code === 410`, kubectl's "is invalid" printing).
 */
import { quote } from './json.ts';

export type StatusReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'Gone'
  | 'Expired'
  | 'BadRequest'
  | 'Forbidden'
  | 'Unauthorized'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'InternalError'
  | 'Timeout'
  | 'TooManyRequests'
  | 'RequestEntityTooLarge'
  | 'ServiceUnavailable';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** A field-level validation error (`field.Error` of apimachinery). */
export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueTypeInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueNotFound';

export interface FieldError {
  type: FieldErrorType;
  field: string;
  /** Absent for Required, Forbidden and TooLong, whose wording omits the value. */
  value?: unknown;
  detail?: string;
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueNotFound: 'Not found',
};

/** apimachinery's `ErrorBody`: numbers and booleans bare, strings quoted, the rest as JSON. */
export function fieldErrorBody(e: FieldError): string {
  let s = TYPE_TEXT[e.type];
  const omitValue =
    e.type === 'FieldValueRequired' || e.type === 'FieldValueForbidden' || e.type === 'FieldValueTooLong';
  if (!omitValue && e.value !== undefined) {
    const v = e.value;
    s += `: ${typeof v === 'string' ? quote(v) : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v)}`;
  }
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

export function fieldErrorText(e: FieldError): string {
  return `${e.field}: ${fieldErrorBody(e)}`;
}

export const field = {
  required: (f: string, detail?: string): FieldError => ({
    type: 'FieldValueRequired',
    field: f,
    ...(detail ? { detail } : {}),
  }),
  invalid: (f: string, value: unknown, detail?: string): FieldError => ({
    type: 'FieldValueInvalid',
    field: f,
    value,
    ...(detail ? { detail } : {}),
  }),
  typeInvalid: (f: string, value: unknown, detail: string): FieldError => ({
    type: 'FieldValueTypeInvalid',
    field: f,
    value,
    detail,
  }),
  notSupported: (f: string, value: unknown, valid: readonly string[]): FieldError => ({
    type: 'FieldValueNotSupported',
    field: f,
    value,
    ...(valid.length ? { detail: `supported values: ${valid.map((v) => quote(v)).join(', ')}` } : {}),
  }),
  duplicate: (f: string, value: unknown): FieldError => ({ type: 'FieldValueDuplicate', field: f, value }),
  forbidden: (f: string, detail: string): FieldError => ({ type: 'FieldValueForbidden', field: f, detail }),
  tooLong: (f: string, max: number): FieldError => ({
    type: 'FieldValueTooLong',
    field: f,
    detail: `may not be more than ${max} bytes`,
  }),
  tooMany: (f: string, actual: number, max: number): FieldError => ({
    type: 'FieldValueTooMany',
    field: f,
    value: actual,
    detail: `must have at most ${max} ${max === 1 ? 'item' : 'items'}`,
  }),
  notFound: (f: string, value: unknown): FieldError => ({ type: 'FieldValueNotFound', field: f, value }),
};

/** `schema.GroupResource`: `pods`, `deployments.apps`. */
export interface GroupResource {
  group: string;
  resource: string;
}

export function grText(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

/** An API error carrying the Status to send; thrown by the store and handlers, rendered by the server. */
export class StatusError extends Error {
  readonly status: Status;
  /** Extra response headers (Retry-After for 429/504). */
  readonly headers: Record<string, string>;

  constructor(code: number, reason: StatusReason, message: string, details?: StatusDetails) {
    super(message);
    this.name = 'StatusError';
    this.status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      reason,
      ...(details ? { details } : {}),
      code,
    };
    this.headers = {};
    if (details?.retryAfterSeconds !== undefined)
      this.headers['retry-after'] = String(details.retryAfterSeconds);
  }

  get code(): number {
    return this.status.code;
  }

  get reason(): StatusReason | undefined {
    return this.status.reason;
  }
}

export function isStatusError(err: unknown): err is StatusError {
  return err instanceof StatusError;
}

function details(gr: GroupResource, name: string): StatusDetails {
  return { name, ...(gr.group ? { group: gr.group } : {}), kind: gr.resource };
}

/** utilerrors.NewAggregate's text: one message alone, several in brackets, duplicates dropped. */
function aggregate(messages: string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? (unique[0] as string) : `[${unique.join(', ')}]`;
}

export const apiErrors = {
  notFound: (gr: GroupResource, name: string) =>
    new StatusError(404, 'NotFound', `${grText(gr)} ${quote(name)} not found`, details(gr, name)),

  alreadyExists: (gr: GroupResource, name: string) =>
    new StatusError(409, 'AlreadyExists', `${grText(gr)} ${quote(name)} already exists`, details(gr, name)),

  conflict: (gr: GroupResource, name: string, why: string) =>
    new StatusError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${grText(gr)} ${quote(name)}: ${why}`,
      details(gr, name),
    ),

  /** The optimistic-concurrency failure: resourceVersion precondition did not match. */
  staleUpdate: (gr: GroupResource, name: string) =>
    apiErrors.conflict(
      gr,
      name,
      'the object has been modified; please apply your changes to the latest version and try again',
    ),

  invalid: (group: string, kind: string, name: string, errs: FieldError[]) => {
    const qualified = group ? `${kind}.${group}` : kind;
    const message = errs.length
      ? `${qualified} ${quote(name)} is invalid: ${aggregate(errs.map(fieldErrorText))}`
      : `${qualified} ${quote(name)} is invalid`;
    return new StatusError(422, 'Invalid', message, {
      name,
      ...(group ? { group } : {}),
      kind,
      causes: errs.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field })),
    });
  },

  badRequest: (message: string) => new StatusError(400, 'BadRequest', message),

  /** 410 with reason Expired: what the watch cache and paginated lists return for a compacted resourceVersion. */
  expired: (message: string) => new StatusError(410, 'Expired', message),

  gone: (message: string) => new StatusError(410, 'Gone', message),

  forbidden: (gr: GroupResource, name: string, why: string) =>
    new StatusError(403, 'Forbidden', `${grText(gr)} ${quote(name)} is forbidden: ${why}`, details(gr, name)),

  unauthorized: () => new StatusError(401, 'Unauthorized', 'Unauthorized'),

  methodNotSupported: (gr: GroupResource, action: string) =>
    new StatusError(
      405,
      'MethodNotAllowed',
      `${action} is not supported on resources of kind ${quote(grText(gr))}`,
      {
        ...(gr.group ? { group: gr.group } : {}),
        kind: gr.resource,
      },
    ),

  notAcceptable: (accepted: string[]) =>
    new StatusError(
      406,
      'NotAcceptable',
      `only the following media types are accepted: ${accepted.join(', ')}`,
    ),

  unsupportedMediaType: (accepted: string[]) =>
    new StatusError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    ),

  internal: (message: string) =>
    new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, {
      causes: [{ message }],
    }),

  timeout: (message: string, retryAfterSeconds: number) =>
    new StatusError(504, 'Timeout', `Timeout: ${message}`, { retryAfterSeconds }),

  tooLarge: (message: string) => new StatusError(413, 'RequestEntityTooLarge', message),

  /** Server-side apply conflicts, as structured-merge-diff words them. */
  applyConflicts: (
    gr: GroupResource,
    name: string,
    conflicts: { manager: string; apiVersion: string; field: string }[],
  ) => {
    const n = conflicts.length;
    const lines = conflicts.map((c) => `conflict with ${quote(c.manager)} using ${c.apiVersion}: ${c.field}`);
    const message =
      n === 1
        ? `Apply failed with 1 conflict: ${lines[0] ?? ''}`
        : `Apply failed with ${n} conflicts: ${lines.join('\n')}`;
    return new StatusError(409, 'Conflict', message, {
      ...details(gr, name),
      causes: conflicts.map((c) => ({
        reason: 'FieldManagerConflict',
        message: `conflict with ${quote(c.manager)} using ${c.apiVersion}`,
        field: c.field,
      })),
    });
  },
};

/** A successful deletion answered with a Status instead of the object (most built-in resources). */
export function successStatus(details: StatusDetails, code = 200): Omit<Status, 'reason' | 'message'> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details, code };
}
