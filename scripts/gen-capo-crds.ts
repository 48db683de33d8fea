/**
 * Writes deploy/capo/crds from the kinds declared in src/capo/api (`npm run gen:crds`): one file
 * per CRD; files of CRDs no longer declared are removed. src/capo/api/crds.test.ts fails when the
 * files differ from what this writes.
 */
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CRD_DIR, crdFiles } from '../src/capo/api/index.ts';

export async function writeCrdFiles(root: string): Promise<string[]> {
  const dir = join(root, CRD_DIR);
  await mkdir(dir, { recursive: true });
  const files = crdFiles();
  const wanted = new Set(files.map((f) => f.name));
  for (const name of await readdir(dir)) {
    if (name.endsWith('.yaml') && !wanted.has(name)) await rm(join(dir, name));
  }
  for (const f of files) await writeFile(join(dir, f.name), f.text);
  return files.map((f) => join(CRD_DIR, f.name));
}

if (import.meta.main) {
  for (const path of await writeCrdFiles(process.cwd())) console.log(`wrote ${path}`);
}
