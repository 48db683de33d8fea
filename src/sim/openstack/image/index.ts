/** Glance v2 on `/image`: images, their data, tags and schemas; `cloud.image` for Nova and Cinder. */
import type { EmulatedCloud } from '../core/cloud.ts';
import { renderGlanceError } from './errors.ts';
import { glanceRoutes } from './routes.ts';
import { ImageStore } from './store.ts';

export { ImageStore, type ImageRecord, type Viewer } from './store.ts';

/** The images a devstack cloud uploads: public, active, owned by the admin project. */
const SEED_IMAGES = [
  { name: 'cirros-0.6.2-x86_64-disk', size: 21_430_272, virtual_size: 117_440_512, min_disk: 1 },
  { name: 'ubuntu-22.04', size: 691_208_192, virtual_size: 2_361_393_152, min_disk: 10 },
] as const;

export function registerGlance(cloud: EmulatedCloud): ImageStore {
  const store = new ImageStore(() => cloud.changed());
  // Project ids belong to Keystone, which may not be asked at register time: owners are filled on first use.
  const seeded = SEED_IMAGES.map((s) =>
    store.seed({ ...s, disk_format: 'qcow2', container_format: 'bare', owner: null }),
  );
  store.setOwnerResolver(() => {
    const identity = cloud.identity as Partial<{
      projectByName(name: string, domainId: string): { id: string } | undefined;
    }>;
    return identity.projectByName?.('admin', 'default')?.id;
  }, seeded);
  cloud.image = store;
  cloud.register(
    {
      name: 'glance',
      type: 'image',
      prefix: '/image',
      catalogPath: '',
      routes: glanceRoutes(store),
      renderError: renderGlanceError,
    },
    {
      persistent: store,
      setState: (resource, id, fields) => resource === 'image' && store.force(id, fields),
    },
  );
  return store;
}
