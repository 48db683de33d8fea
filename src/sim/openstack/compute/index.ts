/**
 * The emulated Nova v2.1 API on `/compute` (catalog `/v2.1`): servers with their build and power
 * state machine over Neutron ports and Cinder volumes, flavors, key pairs, server groups, the
 * compute host's views and microversion negotiation (2.1–2.93).
 */
import type { EmulatedCloud } from '../core/cloud.ts';
import type { SimError } from '../core/errors.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';
import { attachmentRoutes } from './attachments.ts';
import type { Nova } from './context.ts';
import { isBeforeNova, renderNovaError } from './errors.ts';
import { FlavorStore, flavorRoutes } from './flavors.ts';
import { hostRoutes } from './hosts.ts';
import { asRecord } from './http.ts';
import { KeypairStore, keypairRoutes } from './keypairs.ts';
import { Microversions } from './microversion.ts';
import { actionRoutes } from './server-actions.ts';
import { ServerGroupStore, serverGroupRoutes } from './server-groups.ts';
import { Lifecycle } from './server-lifecycle.ts';
import { serverRoutes } from './server-routes.ts';
import { ServerStore } from './server-store.ts';
import { versionList, versionV20, versionV21 } from './versions.ts';

/** The version list and the legacy v2 document are served outside nova's microversioned API. */
const isRoot = (req: SimRequest) =>
  req.path === '' || req.path === '/' || req.path.replace(/\/$/, '') === '/v2';

export function registerNova(cloud: EmulatedCloud): void {
  const mv = new Microversions();
  const nova: Nova = {
    cloud,
    mv,
    flavors: new FlavorStore(),
    keypairs: new KeypairStore(),
    groups: new ServerGroupStore(),
    servers: new ServerStore(),
  };
  nova.flavors.seed();
  const lifecycle = new Lifecycle(nova);
  const changed = () => cloud.changed();
  /** Errors raised before Nova's wsgi layer (token, routing) must not echo a microversion. */
  const unversioned = new WeakSet<SimRequest>();

  cloud.compute = { getServer: (id) => nova.servers.view(id) };

  cloud.register(
    {
      name: 'nova',
      type: 'compute',
      prefix: '/compute',
      catalogPath: '/v2.1',
      routes: [
        { method: 'GET', template: '', handler: versionList, public: true },
        { method: 'GET', template: '/v2', handler: versionV20, public: true },
        { method: 'GET', template: '/v2.1', handler: versionV21, public: true },
        ...serverRoutes(nova, lifecycle),
        ...actionRoutes(nova, lifecycle),
        ...attachmentRoutes(nova),
        ...flavorRoutes(nova.flavors, mv, changed),
        ...keypairRoutes(nova.keypairs, mv, changed),
        ...serverGroupRoutes(nova.groups, mv, changed),
        ...hostRoutes(mv, {
          host: (h) => nova.servers.hostUsage(h),
          project: (p) => ({
            ...nova.servers.projectUsage(p),
            serverGroups: [...nova.groups.byId.values()].filter((g) => g.project_id === p).length,
          }),
        }),
      ],
      before: (req) => {
        if (!isRoot(req)) mv.negotiate(req);
      },
      renderError: (err: SimError, req) => {
        if (req && isBeforeNova(err)) unversioned.add(req);
        return renderNovaError(err, req, () => cloud.serviceUrl('keystone'));
      },
      decorate: (req: SimRequest, res: SimResponse) => {
        // The version list is served outside the request-id middleware, as the recorded root shows.
        if (isRoot(req)) return;
        res.headers = { ...res.headers, 'X-Compute-Request-Id': req.requestId };
        if (unversioned.has(req)) return;
        mv.negotiateQuietly(req);
        mv.echo(req, res);
      },
    },
    {
      persistent: {
        snapshot: () => ({
          flavors: nova.flavors.snapshot(),
          keypairs: nova.keypairs.snapshot(),
          server_groups: nova.groups.snapshot(),
          servers: nova.servers.snapshot(),
        }),
        restore: (data) => {
          const d = asRecord(data);
          if (d['flavors'] !== undefined) nova.flavors.restore(d['flavors']);
          nova.keypairs.restore(d['keypairs']);
          nova.groups.restore(d['server_groups']);
          nova.servers.restore(d['servers']);
        },
      },
      setState: (resource, id, fields) => {
        if (resource !== 'server' && resource !== 'servers') return false;
        const s = nova.servers.byId.get(id);
        if (!s) return false;
        try {
          return lifecycle.force(s, fields);
        } catch (err) {
          // The admin API answers 404 for a refused change; a Neutron failure must not escape it.
          cloud.log?.warn({ err, server: id }, 'nova: forced state failed');
          return false;
        }
      },
    },
  );
}
