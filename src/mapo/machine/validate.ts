/**
 * MAPO's `validateMachine`, before anything is created: read-only calls that tell the user now,
 * rather than as an OpenStackServer stuck resolving, that the flavor, the image (unless the server
 * boots from a volume, whose image Cinder checks) or the availability zone does not exist. Each
 * problem names the field and the value: the Machine goes Failed with InvalidConfiguration.
 */
import type { ServerApi } from '../../openstack/services/server/index.ts';
import type { OpenstackProviderSpec } from '../api/index.ts';

const WHERE = 'spec.providerSpec.value';

export interface ValidationProblem {
  path: string;
  message: string;
}

export async function validateAgainstCloud(
  api: Pick<ServerApi, 'compute' | 'image'>,
  spec: OpenstackProviderSpec,
  signal?: AbortSignal,
): Promise<ValidationProblem[]> {
  const o = { signal };
  const problems: ValidationProblem[] = [];
  const flavor = await api.compute.flavors.findByName(spec.flavor, o);
  if (!flavor) {
    problems.push({
      path: `${WHERE}.flavor`,
      message: `flavor ${JSON.stringify(spec.flavor)} does not exist: set flavor to the name of a flavor of the project (openstack flavor list)`,
    });
  }
  if (spec.image && !spec.rootVolume) {
    const images = await api.image.images.list({ name: spec.image }, o).all();
    if (images.length === 0) {
      problems.push({
        path: `${WHERE}.image`,
        message: `image ${JSON.stringify(spec.image)} does not exist: set image to the name of an image the project can use (openstack image list)`,
      });
    }
  }
  if (spec.availabilityZone) {
    const zones = await api.compute.availabilityZones.list(o);
    if (!zones.some((z) => z.zoneName === spec.availabilityZone)) {
      problems.push({
        path: `${WHERE}.availabilityZone`,
        message: `availability zone ${JSON.stringify(spec.availabilityZone)} does not exist (zones: ${zones.map((z) => z.zoneName).join(', ') || 'none'}): set availabilityZone to one of them, or remove it`,
      });
    }
  }
  return problems;
}
