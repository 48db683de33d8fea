/** Nova's version documents: the list at the root and one document per version, public like the real ones. */
import type { SimRequest, SimResponse } from '../core/types.ts';
import { MAX_VERSION, MIN_VERSION, versionString } from './microversion.ts';

function v20(base: string) {
  return {
    id: 'v2.0',
    status: 'SUPPORTED',
    version: '',
    min_version: '',
    updated: '2011-01-21T11:33:21Z',
    links: [{ rel: 'self', href: `${base}/v2/` }],
  };
}

function v21(base: string) {
  return {
    id: 'v2.1',
    status: 'CURRENT',
    version: versionString(MAX_VERSION),
    min_version: versionString(MIN_VERSION),
    updated: '2013-07-23T11:33:21Z',
    links: [{ rel: 'self', href: `${base}/v2.1/` }],
  };
}

const describedBy = { rel: 'describedby', type: 'text/html', href: 'http://docs.openstack.org/' };

export function versionList(req: SimRequest): SimResponse {
  return { status: 200, body: { versions: [v20(req.baseUrl), v21(req.baseUrl)] } };
}

export function versionV21(req: SimRequest): SimResponse {
  const doc = v21(req.baseUrl);
  return {
    status: 200,
    body: {
      version: {
        ...doc,
        links: [...doc.links, describedBy],
        'media-types': [
          { base: 'application/json', type: 'application/vnd.openstack.compute+json;version=2.1' },
        ],
      },
    },
  };
}

export function versionV20(req: SimRequest): SimResponse {
  const doc = v20(req.baseUrl);
  return {
    status: 200,
    body: {
      version: {
        ...doc,
        links: [...doc.links, describedBy],
        'media-types': [
          { base: 'application/json', type: 'application/vnd.openstack.compute+json;version=2' },
        ],
      },
    },
  };
}
