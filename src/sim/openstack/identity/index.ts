/** Keystone v3: tokens, catalog, projects, domains, users, roles and application credentials. */
import type { EmulatedCloud } from '../core/cloud.ts';
import { REASONS, SimError } from '../core/errors.ts';
import type { AuthContext, Route, ServiceDefinition, SimRequest, SimResponse } from '../core/types.ts';
import { authenticate, validationError } from './auth.ts';
import {
  IdentityStore,
  unauthorized,
  type ApplicationCredential,
  type Project,
  type Token,
} from './store.ts';

const VERSION = {
  id: 'v3.14',
  status: 'stable',
  updated: '2020-04-07T00:00:00Z',
  'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.identity-v3+json' }],
};

type Json = Record<string, unknown>;

export function registerKeystone(cloud: EmulatedCloud): IdentityStore {
  const store = new IdentityStore(cloud.options.tokenTtlMs);
  store.seed(cloud.options.password);
  cloud.identity = store;

  const v3 = (req: SimRequest) => `${req.baseUrl}/v3`;
  const ok = (body: unknown, status = 200): SimResponse => ({ status, body });
  const listLinks = (req: SimRequest, path: string) => ({
    next: null,
    self: `${v3(req)}${path}`,
    previous: null,
  });

  /** Keystone's admin-or-owner policies, reduced to what the emulator needs. */
  function requireAdmin(req: SimRequest, action: string): AuthContext {
    const auth = req.auth!;
    if (!auth.isAdmin) {
      throw new SimError(403, `You are not authorized to perform the requested action: identity:${action}.`, {
        type: 'Forbidden',
      });
    }
    return auth;
  }

  function requireSelfOrAdmin(req: SimRequest, userId: string, action: string): AuthContext {
    const auth = req.auth!;
    if (auth.userId !== userId && !auth.isAdmin) {
      throw new SimError(403, `You are not authorized to perform the requested action: identity:${action}.`, {
        type: 'Forbidden',
      });
    }
    return auth;
  }

  const projectBody = (req: SimRequest, p: Project) => ({
    id: p.id,
    name: p.name,
    domain_id: p.domain_id,
    description: p.description,
    enabled: p.enabled,
    parent_id: p.domain_id,
    is_domain: false,
    tags: p.tags,
    options: {},
    links: { self: `${v3(req)}/projects/${p.id}` },
  });

  const tokenBody = (t: Token) => {
    const user = store.users.get(t.userId)!;
    const domain = store.domains.get(user.domain_id)!;
    const body: Json = {
      methods: t.methods,
      user: {
        domain: { id: domain.id, name: domain.name },
        id: user.id,
        name: user.name,
        password_expires_at: null,
      },
      audit_ids: [t.auditId],
      expires_at: keystoneTime(t.expiresAt),
      issued_at: keystoneTime(t.issuedAt),
    };
    const roles = t.roleIds.map((id) => ({ id, name: store.roles.get(id)?.name ?? id }));
    if (t.scope.kind === 'project') {
      const p = store.projects.get(t.scope.projectId)!;
      const pd = store.domains.get(p.domain_id)!;
      body.project = { domain: { id: pd.id, name: pd.name }, id: p.id, name: p.name };
      body.is_domain = false;
      body.roles = roles;
      body.catalog = cloud.catalog(p.id);
    } else if (t.scope.kind === 'system') {
      body.roles = roles;
      body.system = { all: true };
      body.catalog = cloud.catalog(undefined);
    } else if (t.scope.kind === 'domain') {
      const d = store.domains.get(t.scope.domainId)!;
      body.domain = { id: d.id, name: d.name };
      body.roles = roles;
      body.catalog = cloud.catalog(undefined);
    }
    if (t.appCredId) {
      const ac = store.appCreds.get(t.appCredId);
      if (ac) body.application_credential = { id: ac.id, name: ac.name, restricted: !ac.unrestricted };
    }
    return body;
  };

  const appCredBody = (req: SimRequest, ac: ApplicationCredential, withSecret: boolean) => ({
    id: ac.id,
    name: ac.name,
    description: ac.description,
    user_id: ac.user_id,
    project_id: ac.project_id,
    system: null,
    expires_at: ac.expires_at,
    unrestricted: ac.unrestricted,
    roles: ac.role_ids.map((id) => ({
      id,
      name: store.roles.get(id)?.name ?? id,
      domain_id: null,
      description: null,
      options: { immutable: true },
    })),
    ...(withSecret ? { secret: ac.secret } : {}),
    links: { self: `${v3(req)}/application_credentials/${ac.id}` },
  });

  const catalogServices = (req: SimRequest) =>
    cloud.catalog(req.auth?.projectId) as { id: string; type: string; name: string; endpoints: Json[] }[];

  const routes: Route[] = [
    {
      method: 'GET',
      template: '',
      public: true,
      handler: (req) => ({
        status: 300,
        headers: { Location: `${v3(req)}/` },
        body: { versions: { values: [{ ...VERSION, links: [{ rel: 'self', href: `${v3(req)}/` }] }] } },
      }),
    },
    {
      method: 'GET',
      template: '/v3',
      public: true,
      handler: (req) => ok({ version: { ...VERSION, links: [{ rel: 'self', href: `${v3(req)}/` }] } }),
    },
    {
      method: 'POST',
      template: '/v3/auth/tokens',
      public: true,
      handler: (req) => {
        const token = authenticate(store, req.body);
        cloud.changed();
        const noCatalog = req.query.has('nocatalog');
        const body = tokenBody(token);
        if (noCatalog) delete body.catalog;
        return { status: 201, headers: { 'X-Subject-Token': token.id }, body: { token: body } };
      },
    },
    {
      method: 'GET',
      template: '/v3/auth/tokens',
      handler: (req) => {
        const subject = header(req, 'x-subject-token');
        const t = subject ? store.liveToken(subject) : undefined;
        if (!t) throw new SimError(404, 'Could not recognize Fernet token', { type: 'NotFound' });
        const body = tokenBody(t);
        if (req.query.has('nocatalog')) delete body.catalog;
        return { status: 200, headers: { 'X-Subject-Token': t.id }, body: { token: body } };
      },
    },
    {
      method: 'HEAD',
      template: '/v3/auth/tokens',
      handler: (req) => {
        const subject = header(req, 'x-subject-token');
        if (!subject || !store.liveToken(subject))
          throw new SimError(404, 'Could not recognize Fernet token', { type: 'NotFound' });
        return { status: 200 };
      },
    },
    {
      method: 'DELETE',
      template: '/v3/auth/tokens',
      handler: (req) => {
        const subject = header(req, 'x-subject-token');
        if (!subject || !store.tokens.delete(subject))
          throw new SimError(404, 'Could not recognize Fernet token', { type: 'NotFound' });
        cloud.changed();
        return { status: 204 };
      },
    },
    {
      method: 'GET',
      template: '/v3/auth/catalog',
      handler: (req) =>
        ok({ catalog: cloud.catalog(req.auth?.projectId), links: { self: `${v3(req)}/auth/catalog` } }),
    },
    {
      method: 'GET',
      template: '/v3/auth/projects',
      handler: (req) =>
        ok({
          projects: store.projectsOf(req.auth!.userId).map((p) => projectBody(req, p)),
          links: listLinks(req, '/auth/projects'),
        }),
    },
    {
      method: 'GET',
      template: '/v3/projects',
      handler: (req) => {
        requireAdmin(req, 'list_projects');
        // Keystone ignores `limit` unless list_limit is configured: it returns everything.
        const name = req.query.get('name');
        const domainId = req.query.get('domain_id');
        const projects = [...store.projects.values()].filter(
          (p) => (name === null || p.name === name) && (domainId === null || p.domain_id === domainId),
        );
        return ok({ projects: projects.map((p) => projectBody(req, p)), links: listLinks(req, '/projects') });
      },
    },
    {
      method: 'POST',
      template: '/v3/projects',
      handler: (req) => {
        requireAdmin(req, 'create_project');
        const spec = (req.body as Json | undefined)?.project as Json | undefined;
        if (!spec || typeof spec !== 'object') throw validationError("'project' is a required property");
        if (typeof spec.name !== 'string' || spec.name.trim() === '') {
          throw validationError("'name' is a required property\n\nFailed validating 'required' in schema");
        }
        const domainId = typeof spec.domain_id === 'string' ? spec.domain_id : req.auth!.domainId;
        if (!store.domains.has(domainId)) throw validationError(`Could not find domain: ${domainId}.`);
        const p = store.createProject({
          name: spec.name,
          domain_id: domainId,
          ...(typeof spec.description === 'string' ? { description: spec.description } : {}),
          ...(typeof spec.enabled === 'boolean' ? { enabled: spec.enabled } : {}),
          ...(Array.isArray(spec.tags)
            ? { tags: spec.tags.filter((t): t is string => typeof t === 'string') }
            : {}),
        });
        cloud.changed();
        return ok({ project: projectBody(req, p) }, 201);
      },
    },
    {
      method: 'GET',
      template: '/v3/projects/{project_id}',
      handler: (req) => {
        const p = store.projects.get(req.params.project_id!);
        const auth = req.auth!;
        // Keystone checks the policy before it looks the project up: a member asking for any other
        // project, existing or not, is refused rather than told it does not exist.
        if (!auth.isAdmin && auth.projectId !== req.params.project_id) {
          throw new SimError(
            403,
            'You are not authorized to perform the requested action: identity:get_project.',
            {
              type: 'Forbidden',
            },
          );
        }
        if (!p)
          throw new SimError(404, `Could not find project: ${req.params.project_id}.`, { type: 'NotFound' });
        return ok({ project: projectBody(req, p) });
      },
    },
    {
      method: 'DELETE',
      template: '/v3/projects/{project_id}',
      handler: (req) => {
        requireAdmin(req, 'delete_project');
        if (!store.projects.delete(req.params.project_id!)) {
          throw new SimError(404, `Could not find project: ${req.params.project_id}.`, { type: 'NotFound' });
        }
        cloud.changed();
        return { status: 204 };
      },
    },
    {
      method: 'PUT',
      template: '/v3/projects/{project_id}/users/{user_id}/roles/{role_id}',
      handler: (req) => {
        requireAdmin(req, 'create_grant');
        const project_id = req.params.project_id!;
        const user_id = req.params.user_id!;
        const role_id = req.params.role_id!;
        if (!store.projects.has(project_id))
          throw new SimError(404, `Could not find project: ${project_id}.`);
        if (!store.users.has(user_id)) throw new SimError(404, `Could not find user: ${user_id}.`);
        const role = store.roles.get(role_id);
        if (!role) throw new SimError(404, `Could not find role: ${role_id}.`);
        store.assign(user_id, project_id, [role.name]);
        cloud.changed();
        return { status: 204 };
      },
    },
    {
      method: 'GET',
      template: '/v3/domains',
      handler: (req) =>
        ok({
          domains: [...store.domains.values()].map((d) => ({
            ...d,
            tags: [],
            options: {},
            links: { self: `${v3(req)}/domains/${d.id}` },
          })),
          links: listLinks(req, '/domains'),
        }),
    },
    {
      method: 'GET',
      template: '/v3/domains/{domain_id}',
      handler: (req) => {
        const d = store.domains.get(req.params.domain_id!);
        if (!d) throw new SimError(404, `Could not find domain: ${req.params.domain_id}.`);
        return ok({ domain: { ...d, tags: [], options: {}, links: { self: `${v3(req)}/domains/${d.id}` } } });
      },
    },
    {
      method: 'GET',
      template: '/v3/users',
      handler: (req) => {
        requireAdmin(req, 'list_users');
        const name = req.query.get('name');
        const users = [...store.users.values()].filter((u) => name === null || u.name === name);
        return ok({ users: users.map((u) => userBody(req, u)), links: listLinks(req, '/users') });
      },
    },
    {
      method: 'POST',
      template: '/v3/users',
      handler: (req) => {
        requireAdmin(req, 'create_user');
        const spec = (req.body as Json | undefined)?.user as Json | undefined;
        if (!spec || typeof spec.name !== 'string') throw validationError("'name' is a required property");
        const u = store.createUser({
          name: spec.name,
          domain_id: typeof spec.domain_id === 'string' ? spec.domain_id : 'default',
          password: typeof spec.password === 'string' ? spec.password : '',
          enabled: spec.enabled !== false,
        });
        if (typeof spec.default_project_id === 'string' && store.projects.has(spec.default_project_id)) {
          store.assign(u.id, spec.default_project_id, ['member']);
        }
        cloud.changed();
        return ok({ user: userBody(req, u) }, 201);
      },
    },
    {
      method: 'GET',
      template: '/v3/users/{user_id}',
      handler: (req) => {
        requireSelfOrAdmin(req, req.params.user_id!, 'get_user');
        const u = store.users.get(req.params.user_id!);
        if (!u) throw new SimError(404, `Could not find user: ${req.params.user_id}.`);
        return ok({ user: userBody(req, u) });
      },
    },
    {
      method: 'GET',
      template: '/v3/roles',
      handler: (req) =>
        ok({
          roles: [...store.roles.values()].map((r) => ({
            id: r.id,
            name: r.name,
            domain_id: null,
            description: null,
            options: {},
            links: { self: `${v3(req)}/roles/${r.id}` },
          })),
          links: listLinks(req, '/roles'),
        }),
    },
    {
      method: 'GET',
      template: '/v3/regions',
      handler: (req) =>
        ok({
          regions: [
            {
              id: cloud.options.region,
              description: '',
              parent_region_id: null,
              links: { self: `${v3(req)}/regions/${cloud.options.region}` },
            },
          ],
          links: listLinks(req, '/regions'),
        }),
    },
    {
      method: 'GET',
      template: '/v3/services',
      handler: (req) =>
        ok({
          services: catalogServices(req).map((s) => ({
            name: s.name,
            id: s.id,
            type: s.type,
            enabled: true,
            links: { self: `${v3(req)}/services/${s.id}` },
          })),
          links: listLinks(req, '/services'),
        }),
    },
    {
      method: 'GET',
      template: '/v3/endpoints',
      handler: (req) => {
        const iface = req.query.get('interface');
        const serviceId = req.query.get('service_id');
        const endpoints = catalogServices(req).flatMap((s) =>
          s.endpoints
            .filter(
              (e) => (iface === null || e.interface === iface) && (serviceId === null || s.id === serviceId),
            )
            .map((e) => ({
              id: e.id,
              interface: e.interface,
              region_id: e.region_id,
              service_id: s.id,
              url: e.url,
              enabled: true,
              region: e.region,
              links: { self: `${v3(req)}/endpoints/${String(e.id)}` },
            })),
        );
        return ok({ endpoints, links: listLinks(req, '/endpoints') });
      },
    },
    {
      method: 'GET',
      template: '/v3/users/{user_id}/application_credentials',
      handler: (req) => {
        const userId = req.params.user_id!;
        requireSelfOrAdmin(req, userId, 'list_application_credentials');
        const name = req.query.get('name');
        const list = [...store.appCreds.values()].filter(
          (a) => a.user_id === userId && (name === null || a.name === name),
        );
        return ok({
          application_credentials: list.map((a) => appCredBody(req, a, false)),
          links: listLinks(req, `/users/${userId}/application_credentials`),
        });
      },
    },
    {
      method: 'POST',
      template: '/v3/users/{user_id}/application_credentials',
      handler: (req) => {
        const userId = req.params.user_id!;
        const auth = req.auth!;
        if (auth.userId !== userId) {
          throw new SimError(
            403,
            'You are not authorized to perform the requested action: identity:create_application_credential.',
          );
        }
        if (!auth.projectId)
          throw new SimError(400, 'Application credentials must be created with a project-scoped token.');
        const spec = (req.body as Json | undefined)?.application_credential as Json | undefined;
        if (!spec || typeof spec.name !== 'string') throw validationError("'name' is a required property");
        const tokenRoles = store.liveToken(auth.token)?.roleIds ?? [];
        let roleIds = tokenRoles;
        if (Array.isArray(spec.roles)) {
          roleIds = spec.roles.map((r) => {
            const ref = r as Json;
            const role =
              typeof ref.id === 'string' ? store.roles.get(ref.id) : store.roleByName(String(ref.name));
            if (!role || !tokenRoles.includes(role.id)) {
              throw new SimError(
                403,
                `Invalid application credential: the user does not have role ${String(ref.name ?? ref.id)} on the project.`,
              );
            }
            return role.id;
          });
        }
        const ac = store.createAppCred({
          userId,
          projectId: auth.projectId,
          name: spec.name,
          description: typeof spec.description === 'string' ? spec.description : null,
          ...(typeof spec.secret === 'string' ? { secret: spec.secret } : {}),
          expires_at: typeof spec.expires_at === 'string' ? spec.expires_at : null,
          unrestricted: typeof spec.unrestricted === 'boolean' ? spec.unrestricted : null,
          roleIds,
        });
        cloud.changed();
        return ok({ application_credential: appCredBody(req, ac, true) }, 201);
      },
    },
    {
      method: 'GET',
      template: '/v3/users/{user_id}/application_credentials/{credential_id}',
      handler: (req) => {
        requireSelfOrAdmin(req, req.params.user_id!, 'get_application_credential');
        const ac = store.appCreds.get(req.params.credential_id!);
        if (!ac || ac.user_id !== req.params.user_id) {
          throw new SimError(404, `Could not find Application Credential: ${req.params.credential_id}.`);
        }
        return ok({ application_credential: appCredBody(req, ac, false) });
      },
    },
    {
      method: 'DELETE',
      template: '/v3/users/{user_id}/application_credentials/{credential_id}',
      handler: (req) => {
        requireSelfOrAdmin(req, req.params.user_id!, 'delete_application_credential');
        const ac = store.appCreds.get(req.params.credential_id!);
        if (!ac || ac.user_id !== req.params.user_id) {
          throw new SimError(404, `Could not find Application Credential: ${req.params.credential_id}.`);
        }
        store.appCreds.delete(ac.id);
        cloud.changed();
        return { status: 204 };
      },
    },
  ];

  const definition: ServiceDefinition = {
    name: 'keystone',
    type: 'identity',
    prefix: '/identity',
    catalogPath: '/v3/',
    routes,
    renderError(err, req) {
      const status = err.status;
      const headers: Record<string, string> = {};
      if (status === 401) headers['WWW-Authenticate'] = `Keystone uri="${req ? `${req.baseUrl}/v3` : ''}"`;
      let message = err.message;
      if (err.detail === 'malformed-json') message = validationError('Malformed request body.').message;
      if (status === 404 && err.type === 'HTTPNotFound') message = 'The resource could not be found.';
      return {
        status,
        headers,
        body: { error: { code: status, message, title: REASONS[status] ?? 'Error' } },
      };
    },
    decorate(_req, res) {
      res.headers = { Vary: 'X-Auth-Token', ...res.headers };
    },
  };
  cloud.register(definition, { persistent: store });
  return store;
}

function header(req: SimRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function userBody(req: SimRequest, u: { id: string; name: string; domain_id: string; enabled: boolean }) {
  return {
    id: u.id,
    name: u.name,
    domain_id: u.domain_id,
    enabled: u.enabled,
    password_expires_at: null,
    options: {},
    links: { self: `${req.baseUrl}/v3/users/${u.id}` },
  };
}

/** Keystone prints microseconds: 2026-11-21T16:05:23.000000Z. */
function keystoneTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export { unauthorized };
