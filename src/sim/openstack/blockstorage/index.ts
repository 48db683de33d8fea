/** Cinder v3 on `/volume`: volumes, types, availability zones and limits; `cloud.volume` for Nova. */
import type { EmulatedCloud } from '../core/cloud.ts';
import { SimError } from '../core/errors.ts';
import type { SimRequest } from '../core/types.ts';
import { renderCinderError } from './errors.ts';
import { Microversions } from './microversion.ts';
import { cinderRoutes } from './routes.ts';
import { VolumeStore } from './store.ts';

export { VolumeStore, type VolumeRecord } from './store.ts';

export function registerCinder(cloud: EmulatedCloud): VolumeStore {
  const store = new VolumeStore(cloud);
  const mv = new Microversions();
  cloud.volume = store;
  cloud.register(
    {
      name: 'cinder',
      type: 'block-storage',
      aliases: ['volumev3'],
      prefix: '/volume',
      catalogPath: '/v3/{project_id}',
      routes: cinderRoutes(store, mv),
      renderError: renderCinderError,
      before: (req: SimRequest) => {
        mv.negotiate(req);
        const inUrl = req.params.project_id;
        // cinder's wsgi refuses a URL naming another project than the token's.
        if (inUrl !== undefined && req.auth && inUrl !== req.auth.projectId) {
          throw new SimError(400, 'Malformed request url', { type: 'BadRequest' });
        }
      },
      decorate: (req, res) => mv.decorate(req, res),
    },
    {
      persistent: store,
      setState: (resource, id, fields) => resource === 'volume' && store.force(id, fields),
    },
  );
  return store;
}
