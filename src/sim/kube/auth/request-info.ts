/**
 * What a request asks for, in authorization terms: apiserver's RequestInfoFactory. It reads the URL
 * alone, before any routing, so a request for a resource that does not exist is still authorized
 * (and denied) as on the real server. A list or watch whose field selector pins `metadata.name`
 * carries that name, which is why `resourceNames` can grant a watch of one object.
 */
import { parseFieldSelector, pinnedName } from '../selectors.ts';

export interface RequestInfo {
  /** Resource requests: get, list, watch, create, update, patch, delete, deletecollection. Others: the lower-case method. */
  verb: string;
  resourceRequest: boolean;
  /** Non-resource requests: the path (`/version`, `/apis`). */
  path: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

const METHOD_VERBS: Record<string, string> = {
  POST: 'create',
  GET: 'get',
  HEAD: 'get',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
};

/** Subresources of a namespace itself (`/api/v1/namespaces/x/status`), not resources inside it. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

export function requestInfo(method: string, url: URL): RequestInfo {
  const path = url.pathname.replace(/\/+$/, '') || '/';
  const nonResource: RequestInfo = {
    verb: method.toLowerCase(),
    resourceRequest: false,
    path,
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
  };
  const verb = METHOD_VERBS[method.toUpperCase()];
  let parts = path.split('/').filter(Boolean).map(decode);
  let apiGroup = '';
  if (parts[0] === 'api' && parts.length >= 3) parts = parts.slice(1);
  else if (parts[0] === 'apis' && parts.length >= 4) {
    apiGroup = parts[1] as string;
    parts = parts.slice(2);
  } else return nonResource;
  if (!verb) return nonResource;
  const apiVersion = parts[0] as string;
  parts = parts.slice(1);
  let namespace = '';
  if (parts[0] === 'namespaces' && parts.length > 1) {
    namespace = parts[1] as string;
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2] as string)) parts = parts.slice(2);
  }
  const info: RequestInfo = {
    verb,
    resourceRequest: true,
    path,
    apiGroup,
    apiVersion,
    resource: parts[0] ?? '',
    name: parts[1] ?? '',
    subresource: parts[2] ?? '',
    namespace,
  };
  if (!info.name && verb === 'get') {
    const watch = url.searchParams.get('watch');
    info.verb = watch === 'true' || watch === '1' ? 'watch' : 'list';
    const selector = url.searchParams.get('fieldSelector');
    if (selector) {
      try {
        const name = pinnedName(parseFieldSelector(selector));
        if (name && !name.includes('/') && !name.includes('%') && name !== '.' && name !== '..')
          info.name = name;
      } catch {
        // A malformed selector authorizes as an unnamed list; the handler then refuses it.
      }
    }
  }
  if (!info.name && verb === 'delete') info.verb = 'deletecollection';
  return info;
}

function decode(seg: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    return seg;
  }
}
