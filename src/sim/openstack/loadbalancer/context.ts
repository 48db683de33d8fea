/** What every Octavia handler shares: the stores, the state machine, and Octavia's RBAC rules. */
import type { EmulatedCloud } from '../core/cloud.ts';
import type { AuthContext, SimRequest } from '../core/types.ts';
import { policyForbidden } from './errors.ts';
import type { Lifecycle } from './lifecycle.ts';
import type { Provisioned } from './model.ts';
import type { OperatingStatuses } from './status.ts';
import type { OctaviaStore } from './store.ts';
import type { Views } from './views.ts';

export interface Ctx {
  cloud: EmulatedCloud;
  store: OctaviaStore;
  life: Lifecycle;
  status: OperatingStatuses;
  views: Views;
}

export function authOf(req: SimRequest): AuthContext {
  return req.auth!;
}

/**
 * Octavia's owner-or-admin policies. Another project's object is a 403, not a 404: Octavia loads
 * the object first and then asks the policy engine about its project.
 */
export function authorize(req: SimRequest, projectId: string): void {
  const auth = authOf(req);
  if (auth.isAdmin) return;
  if (!auth.projectId || auth.projectId !== projectId) throw policyForbidden();
}

/** Failover and the flavor/availability-zone profiles are admin-only in Octavia's default policy. */
export function requireAdmin(req: SimRequest): void {
  if (!authOf(req).isAdmin) throw policyForbidden();
}

/** The project a create goes to: the body's project_id (or tenant_id) if given, else the token's. */
export function targetProject(req: SimRequest, body: Record<string, unknown>): string {
  const explicit = (body.project_id ?? body.tenant_id) as string | null | undefined;
  const projectId = explicit ?? authOf(req).projectId;
  if (!projectId) throw policyForbidden();
  authorize(req, projectId);
  return projectId;
}

/**
 * Which objects a list shows: an admin sees every project's unless `project_id` narrows it;
 * anyone else sees their own project only, and asking for another project is a 403.
 */
export function listScope(req: SimRequest): (r: Pick<Provisioned, 'project_id'>) => boolean {
  const auth = authOf(req);
  const asked = req.query.get('project_id');
  if (auth.isAdmin) return asked === null ? () => true : (r) => r.project_id === asked;
  const own = auth.projectId;
  if (asked !== null && asked !== own) throw policyForbidden();
  return (r) => r.project_id === own;
}
