/** Everything a Nova handler may need, built once per cloud by registerNova. */
import type { EmulatedCloud } from '../core/cloud.ts';
import type { FlavorStore } from './flavors.ts';
import type { KeypairStore } from './keypairs.ts';
import type { Microversions } from './microversion.ts';
import type { ServerGroupStore } from './server-groups.ts';
import type { ServerStore } from './server-store.ts';

export interface Nova {
  cloud: EmulatedCloud;
  mv: Microversions;
  flavors: FlavorStore;
  keypairs: KeypairStore;
  groups: ServerGroupStore;
  servers: ServerStore;
}
