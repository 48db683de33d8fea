/**
 * authentication.k8s.io/v1 TokenReview and authorization.k8s.io/v1 SubjectAccessReview: creates
 * that answer with a status and store nothing. A component's secure port delegates to them (who is
 * this bearer token; may that user get /metrics), exactly as it does against a real API server.
 */
import { apiErrors, field, type FieldError } from '../errors.ts';
import { asArray, asObj, asString, type Obj } from '../json.ts';
import type { ResourceDef } from '../types.ts';
import type { Auth } from '../auth/auth.ts';
import type { RequestInfo } from '../auth/request-info.ts';
import { builtin } from './common.ts';

function strings(v: unknown): string[] {
  return (asArray(v) ?? []).filter((x): x is string => typeof x === 'string');
}

function answered(obj: Obj, status: Obj): Obj {
  const m = asObj(obj.metadata) ?? {};
  return { ...obj, metadata: { ...m, creationTimestamp: null }, status };
}

function tokenReview(auth: Auth, obj: Obj): Obj {
  const spec = asObj(obj.spec) ?? {};
  const token = asString(spec.token) ?? '';
  const user = token ? auth.authenticate(token) : undefined;
  const audiences = strings(spec.audiences);
  if (!user) return answered(obj, { user: {}, error: 'invalid bearer token' });
  return answered(obj, {
    authenticated: true,
    user: { username: user.username, ...(user.uid ? { uid: user.uid } : {}), groups: user.groups },
    ...(audiences.length ? { audiences } : {}),
  });
}

function subjectAccessReview(auth: Auth, obj: Obj): Obj {
  const spec = asObj(obj.spec) ?? {};
  const username = asString(spec.user) ?? '';
  const groups = strings(spec.groups);
  const resource = asObj(spec.resourceAttributes);
  const nonResource = asObj(spec.nonResourceAttributes);
  const errs: FieldError[] = [];
  if (!username && groups.length === 0)
    errs.push(field.invalid('spec.user', username, 'at least one of user or group must be specified'));
  if (!resource === !nonResource) {
    errs.push(
      field.invalid(
        'spec.resourceAttributes',
        resource ?? null,
        'exactly one of nonResourceAttributes or resourceAttributes must be specified',
      ),
    );
  }
  if (errs.length) throw apiErrors.invalid('authorization.k8s.io', 'SubjectAccessReview', '', errs);
  const attrs: RequestInfo = resource
    ? {
        verb: asString(resource.verb) ?? '',
        resourceRequest: true,
        path: '',
        apiGroup: asString(resource.group) ?? '',
        apiVersion: asString(resource.version) ?? '',
        resource: asString(resource.resource) ?? '',
        subresource: asString(resource.subresource) ?? '',
        namespace: asString(resource.namespace) ?? '',
        name: asString(resource.name) ?? '',
      }
    : {
        verb: asString(nonResource?.verb) ?? '',
        resourceRequest: false,
        path: asString(nonResource?.path) ?? '',
        apiGroup: '',
        apiVersion: '',
        resource: '',
        subresource: '',
        namespace: '',
        name: '',
      };
  const uid = asString(spec.uid);
  const decision = auth.authorize({ username, groups, ...(uid ? { uid } : {}) }, attrs);
  return answered(obj, {
    allowed: decision.allowed,
    ...(decision.reason ? { reason: decision.reason } : {}),
  });
}

/** The review resources, answered by this emulator's `auth`. */
export function reviewResources(auth: Auth): ResourceDef[] {
  return [
    {
      ...builtin({
        group: 'authentication.k8s.io',
        resource: 'tokenreviews',
        kind: 'TokenReview',
        namespaced: false,
        verbs: ['create'],
      }),
      review: (obj) => tokenReview(auth, obj),
    },
    {
      ...builtin({
        group: 'authorization.k8s.io',
        resource: 'subjectaccessreviews',
        kind: 'SubjectAccessReview',
        namespaced: false,
        verbs: ['create'],
      }),
      review: (obj) => subjectAccessReview(auth, obj),
    },
  ];
}
