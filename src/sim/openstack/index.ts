import { EmulatedCloud, type CloudOptions } from './core/cloud.ts';
import { registerCinder } from './blockstorage/index.ts';
import { registerNova } from './compute/index.ts';
import { registerKeystone } from './identity/index.ts';
import { registerGlance } from './image/index.ts';
import { registerOctavia } from './loadbalancer/index.ts';
import { registerNeutron } from './network/index.ts';
import { registerPlacement } from './placement/index.ts';

export { EmulatedCloud, type CloudOptions } from './core/cloud.ts';

/** A cloud with every emulated service registered and seeded, not yet listening. */
export function createOpenStackSim(options: CloudOptions = {}): EmulatedCloud {
  const cloud = new EmulatedCloud(options);
  registerKeystone(cloud);
  registerNeutron(cloud);
  registerNova(cloud);
  registerOctavia(cloud);
  registerGlance(cloud);
  registerCinder(cloud);
  registerPlacement(cloud);
  return cloud;
}
