/** Neutron v2.0 (ML2/OVS with router and trunk plugins, as a Zed cloud) mounted at /networking. */
import type { EmulatedCloud } from '../core/cloud.ts';
import { NeutronNetworkApi } from './api.ts';
import { renderNeutronError } from './errors.ts';
import { neutronPersistence } from './persist.ts';
import { neutronRoutes } from './routes.ts';
import { seedNeutron } from './seed.ts';
import { forceState } from './set-state.ts';
import { NeutronState } from './state.ts';

export { NeutronState } from './state.ts';

export function registerNeutron(cloud: EmulatedCloud): NeutronState {
  const state = new NeutronState(cloud);
  // Seeding needs Keystone's admin project id, known only once Keystone is up: do it on first use.
  const ready = () => seedNeutron(state);
  cloud.network = new NeutronNetworkApi(state, ready);
  cloud.register(
    {
      name: 'neutron',
      type: 'network',
      prefix: '/networking',
      catalogPath: '',
      routes: neutronRoutes(state, ready),
      renderError: (err, req) => renderNeutronError(err, req, () => cloud.serviceUrl('keystone')),
    },
    {
      persistent: neutronPersistence(state),
      setState: (resource, id, fields) => {
        ready();
        return forceState(state, resource, id, fields);
      },
    },
  );
  return state;
}
