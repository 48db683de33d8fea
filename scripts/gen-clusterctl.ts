/**
 * Writes deploy/clusterctl/infrastructure-openstack/v<version>/infrastructure-components.yaml from
 * deploy/capo (`npm run gen:clusterctl`): the provider's objects as clusterctl installs them.
 * src/capo/clusterctl.test.ts fails when the file differs from what this writes.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { componentsPath, infrastructureComponents } from '../src/capo/clusterctl/components.ts';

if (import.meta.main) {
  const root = process.cwd();
  const path = await componentsPath(root);
  await mkdir(join(root, dirname(path)), { recursive: true });
  await writeFile(join(root, path), await infrastructureComponents(root));
  console.log(`wrote ${path}`);
}
