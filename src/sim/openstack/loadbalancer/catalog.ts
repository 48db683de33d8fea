/** Version discovery, providers, and the (empty) availability zone catalog; flavors are in flavors.ts. */
import type { SimRequest, SimResponse } from '../core/types.ts';
import { requireAdmin } from './context.ts';
import { notFound, providerNotEnabled } from './errors.ts';
import { PROVIDERS, isEnabledProvider } from './providers.ts';

/** Octavia Zed's API versions, as octavia_GET_root.json records them. */
const VERSIONS: readonly [string, string][] = [
  ['v2.0', '2016-12-11T00:00:00Z'],
  ['v2.1', '2018-04-20T00:00:00Z'],
  ['v2.2', '2018-07-31T00:00:00Z'],
  ['v2.3', '2018-12-18T00:00:00Z'],
  ['v2.4', '2018-12-19T00:00:00Z'],
  ['v2.5', '2019-01-21T00:00:00Z'],
  ['v2.6', '2019-01-25T00:00:00Z'],
  ['v2.7', '2018-01-25T12:00:00Z'],
  ['v2.8', '2019-02-12T00:00:00Z'],
  ['v2.9', '2019-03-04T00:00:00Z'],
  ['v2.10', '2019-03-05T00:00:00Z'],
  ['v2.11', '2019-06-24T00:00:00Z'],
  ['v2.12', '2019-09-11T00:00:00Z'],
  ['v2.13', '2019-09-13T00:00:00Z'],
  ['v2.14', '2019-11-10T00:00:00Z'],
  ['v2.15', '2020-03-10T00:00:00Z'],
  ['v2.16', '2020-03-15T00:00:00Z'],
  ['v2.17', '2020-04-29T00:00:00Z'],
  ['v2.18', '2020-04-29T01:00:00Z'],
  ['v2.19', '2020-05-12T00:00:00Z'],
  ['v2.20', '2020-08-02T00:00:00Z'],
  ['v2.21', '2020-09-03T00:00:00Z'],
  ['v2.22', '2020-09-04T00:00:00Z'],
  ['v2.23', '2020-09-07T00:00:00Z'],
  ['v2.24', '2020-10-15T00:00:00Z'],
  ['v2.25', '2021-10-02T00:00:00Z'],
  ['v2.26', '2022-08-29T00:00:00Z'],
];

export function versions(req: SimRequest): SimResponse {
  const href = `${req.baseUrl}/v2`;
  const last = VERSIONS.length - 1;
  return {
    status: 200,
    body: {
      versions: VERSIONS.map(([id, updated], i) => ({
        id,
        status: i === last ? 'CURRENT' : 'SUPPORTED',
        updated,
        links: [{ href, rel: 'self' }],
      })),
    },
  };
}

/** GET /v2 and /v2/lbaas answer with the bare version string, as Octavia's BaseV2Controller does. */
export function v2Root(): SimResponse {
  return { status: 200, body: JSON.stringify('v2.0'), contentType: 'application/json' };
}

export function providers(): SimResponse {
  return {
    status: 200,
    body: { providers: PROVIDERS.map((p) => ({ name: p.name, description: p.description })) },
  };
}

/** No provider here exposes flavor or availability zone capabilities beyond an empty list (flavor_data is not checked against them). */
export function capabilities(kind: 'flavor_capabilities' | 'availability_zone_capabilities') {
  return (req: SimRequest): SimResponse => {
    const provider = req.params.provider!;
    if (!isEnabledProvider(provider)) throw providerNotEnabled(provider);
    return { status: 200, body: { [kind]: [] } };
  };
}

export function emptyList(collection: string, adminOnly = false) {
  return (req: SimRequest): SimResponse => {
    if (adminOnly) requireAdmin(req);
    return { status: 200, body: { [collection]: [], [`${collection}_links`]: [] } };
  };
}

export function missing(resource: string, param: string, adminOnly = false) {
  return (req: SimRequest): SimResponse => {
    if (adminOnly) requireAdmin(req);
    throw notFound(resource, req.params[param]!);
  };
}
