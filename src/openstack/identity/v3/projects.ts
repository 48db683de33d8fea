/**
 * Keystone projects. `GET /v3/projects` needs an admin (or domain reader) role; `GET
 * /v3/auth/projects` lists the projects the token's user may scope to, for anyone.
 * https://docs.openstack.org/api-ref/identity/v3/#projects
 */
import type { CallOptions } from '../../core/call-options.ts';
import { Pager } from '../../core/pagination.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import type { Project, ProjectListQuery } from './types.ts';

export function listProjects(
  sc: ServiceClient,
  query: ProjectListQuery = {},
  options: CallOptions = {},
): Pager<Project> {
  return new Pager<Project>({
    client: sc,
    path: 'projects',
    query: { ...query },
    collection: 'projects',
    strategy: 'keystone',
    label: 'project_list',
    signal: options.signal,
  });
}

/** The projects the current token's user has a role on. */
export function listAuthProjects(sc: ServiceClient, options: CallOptions = {}): Pager<Project> {
  return new Pager<Project>({
    client: sc,
    path: 'auth/projects',
    collection: 'projects',
    strategy: 'keystone',
    label: 'project_list',
    signal: options.signal,
  });
}

export async function getProject(sc: ServiceClient, id: string, options: CallOptions = {}): Promise<Project> {
  const res = await sc.request<{ project: Project }>({
    method: 'GET',
    path: `projects/${encodeURIComponent(id)}`,
    label: 'project_get',
    signal: options.signal,
  });
  return res.body.project;
}
