/**
 * What a test boot needs: an active image and a flavor it fits. The emulator has both (cirros,
 * m1.tiny); an empty real cloud gets a 1 KiB raw image from the demo user and a flavor from the admin,
 * both removed by `cleanup`.
 */
import type { OpenStackClient } from '../../../client.ts';
import { unique, type ClientTarget } from '../../../core/testing/target.ts';
import { waitTimings, type Cleanup } from '../../../network/v2/testing/fixtures.ts';

export async function bootSources(
  t: ClientTarget,
  os: OpenStackClient,
  cleanup: Cleanup,
): Promise<{ flavorId: string; imageId: string } | undefined> {
  const images = await os.image.images.list({ status: 'active' }).all();
  let image = [...images].sort((a, b) => a.min_disk - b.min_disk || a.min_ram - b.min_ram)[0];
  if (!image) {
    const created = await os.image.images.create({
      name: unique('client-boot'),
      disk_format: 'raw',
      container_format: 'bare',
    });
    cleanup.add(`image ${created.id}`, () => os.image.images.delete(created.id));
    await os.image.images.upload(created.id, new Uint8Array(1024));
    image = await os.image.images.waitForActive(created.id, waitTimings(t));
  }
  const fits = (await os.compute.flavors.list().all())
    .filter((f) => f.disk >= image.min_disk && f.ram >= image.min_ram)
    .sort((a, b) => a.ram - b.ram);
  let flavorId = fits[0]?.id;
  if (!flavorId) {
    if (!t.admin) return undefined;
    const admin = await t.client(t.admin);
    const flavor = await admin.compute.flavors.create({
      name: unique('client-flavor'),
      vcpus: 1,
      ram: Math.max(128, image.min_ram),
      disk: Math.max(1, image.min_disk),
    });
    cleanup.add(`flavor ${flavor.id}`, () => admin.compute.flavors.delete(flavor.id));
    flavorId = flavor.id;
  }
  return { flavorId, imageId: image.id };
}
