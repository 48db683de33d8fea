/**
 * Nova server groups: a scheduling policy (affinity, anti-affinity, soft variants) for the servers
 * booted with the `group` scheduler hint. The policy is one string from 2.64 (with `rules`), a
 * one-element `policies` list before: `createServerGroup` sends whichever the microversion takes.
 * https://docs.openstack.org/api-ref/compute/#server-groups-os-server-groups
 */
import type { CallOptions } from '../../core/call-options.ts';
import { PaginationError } from '../../core/errors.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { atLeast, computeMicroversion, requireMicroversion } from './microversion.ts';

export type ServerGroupPolicy = 'affinity' | 'anti-affinity' | 'soft-affinity' | 'soft-anti-affinity';

export interface ServerGroupRules {
  /** anti-affinity only: servers of the group one host may hold. */
  max_server_per_host?: number;
}

export interface ServerGroup {
  id: string;
  name: string;
  /** Ids of the servers in the group. */
  members: string[];
  /** @microversion 2.64 */
  policy?: ServerGroupPolicy;
  /** @microversion 2.64 */
  rules?: ServerGroupRules;
  /** Before 2.64. */
  policies?: ServerGroupPolicy[];
  metadata?: Record<string, string>;
  /** @microversion 2.13 */
  project_id?: string;
  /** @microversion 2.13 */
  user_id?: string;
}

export interface ServerGroupCreateOpts {
  name: string;
  policy: ServerGroupPolicy;
  /** @microversion 2.64 */
  rules?: ServerGroupRules;
}

/** The policy, whichever microversion the group was read with. */
export function serverGroupPolicy(group: ServerGroup): ServerGroupPolicy | undefined {
  return group.policy ?? group.policies?.[0];
}

const item = (id: string) => `os-server-groups/${encodeURIComponent(id)}`;

/** `POST /os-server-groups` → the group. */
export async function createServerGroup(
  sc: ServiceClient,
  opts: ServerGroupCreateOpts,
  options: CallOptions = {},
): Promise<ServerGroup> {
  const mv = await computeMicroversion(sc, options.signal);
  if (opts.rules !== undefined)
    await requireMicroversion(sc, mv, '2.64', 'server group rules', options.signal);
  const body = atLeast(mv, '2.64')
    ? { name: opts.name, policy: opts.policy, ...(opts.rules ? { rules: opts.rules } : {}) }
    : { name: opts.name, policies: [opts.policy] };
  const res = await sc.request<{ server_group: ServerGroup }>({
    method: 'POST',
    path: 'os-server-groups',
    body: { server_group: body },
    label: 'server_group_create',
    signal: options.signal,
  });
  return res.body.server_group;
}

/** `GET /os-server-groups/{id}`. */
export async function getServerGroup(
  sc: ServiceClient,
  id: string,
  options: CallOptions = {},
): Promise<ServerGroup> {
  await computeMicroversion(sc, options.signal);
  const res = await sc.request<{ server_group: ServerGroup }>({
    method: 'GET',
    path: item(id),
    label: 'server_group_get',
    signal: options.signal,
  });
  return res.body.server_group;
}

/** Nova's own cap on one answer (`[api] max_limit`); asking for more returns this many. */
const PAGE = 1000;
const MAX_PAGES = 1000;

/**
 * `GET /os-server-groups`, every page. Nova pages this list by `offset` and gives no next link, so
 * pages are read until one comes back short.
 */
export async function listServerGroups(
  sc: ServiceClient,
  query: { all_projects?: boolean; limit?: number } = {},
  options: CallOptions = {},
): Promise<ServerGroup[]> {
  await computeMicroversion(sc, options.signal);
  const limit = Math.min(query.limit ?? PAGE, PAGE);
  const out: ServerGroup[] = [];
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await sc.request<{ server_groups: ServerGroup[] }>({
      method: 'GET',
      path: 'os-server-groups',
      query: { all_projects: query.all_projects, limit, offset: page * limit },
      label: 'server_group_list',
      signal: options.signal,
    });
    out.push(...res.body.server_groups);
    if (res.body.server_groups.length < limit) return out;
  }
  throw new PaginationError(
    await sc.url('os-server-groups'),
    `more than ${MAX_PAGES} pages; narrow the query`,
  );
}

/** `DELETE /os-server-groups/{id}` → 204. Its servers stay; the policy no longer applies to new ones. */
export async function deleteServerGroup(
  sc: ServiceClient,
  id: string,
  options: CallOptions = {},
): Promise<void> {
  await computeMicroversion(sc, options.signal);
  await sc.request({
    method: 'DELETE',
    path: item(id),
    label: 'server_group_delete',
    signal: options.signal,
    expect: [204],
  });
}
