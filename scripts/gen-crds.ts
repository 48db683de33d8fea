/**
 * Writes every part's CRD files from the kinds it declares in code (`npm run gen:crds`):
 * deploy/capo/crds from src/capo/api, deploy/ccm-operator/crds from src/ccm-operator/api,
 * deploy/mapo/crds from src/mapo/api,
 * deploy/kuryr/crds from src/kuryr/api. One file per CRD; files of CRDs no longer declared are
 * removed. Each part's crds.test.ts fails when its files differ from what this writes.
 */
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as capo from '../src/capo/api/files.ts';
import * as ccmOperator from '../src/ccm-operator/api/files.ts';
import * as kuryr from '../src/kuryr/api/files.ts';
import * as mapo from '../src/mapo/api/files.ts';
import type { CrdFile } from '../src/kube/crd/kind.ts';

/** A part that ships CRDs: where they go, and their text. */
export interface CrdPart {
  CRD_DIR: string;
  crdFiles(): CrdFile[];
}

export const PARTS: readonly CrdPart[] = [capo, ccmOperator, mapo, kuryr];

export async function writeCrdFiles(root: string, part: CrdPart): Promise<string[]> {
  const dir = join(root, part.CRD_DIR);
  await mkdir(dir, { recursive: true });
  const files = part.crdFiles();
  const wanted = new Set(files.map((f) => f.name));
  for (const name of await readdir(dir)) {
    if (name.endsWith('.yaml') && !wanted.has(name)) await rm(join(dir, name));
  }
  for (const f of files) await writeFile(join(dir, f.name), f.text);
  return files.map((f) => join(part.CRD_DIR, f.name));
}

if (import.meta.main) {
  for (const part of PARTS) {
    for (const path of await writeCrdFiles(process.cwd(), part)) console.log(`wrote ${path}`);
  }
}
