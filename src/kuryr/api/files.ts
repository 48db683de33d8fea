/**
 * The CRD files of deploy/kuryr/crds as text, one per kind (`<group>_<plural>.yaml`).
 * `npm run gen:crds` writes them; crds.test.ts fails when the files differ from what this returns.
 */
import { crdFile, type CrdFile } from '../../kube/crd/kind.ts';
import { ALL_KINDS } from './kinds.ts';

export const CRD_DIR = 'deploy/kuryr/crds';

const HEADER = '# Generated from src/kuryr/api by scripts/gen-crds.ts (npm run gen:crds). Do not edit.\n';

export function crdFiles(): CrdFile[] {
  return ALL_KINDS.map((kind) => crdFile(kind, HEADER));
}
