/**
 * The CRD files of deploy/capo/crds as text: one YAML file per CRD, named like controller-gen
 * names them (`<group>_<plural>.yaml`). `npm run gen:crds` writes them; crds.test.ts fails when
 * the files differ from what this returns, so the code stays the one source of truth.
 */
import { crdFile, type CrdFile } from '../../kube/crd/kind.ts';
import { ALL_KINDS } from './kinds.ts';

export const CRD_DIR = 'deploy/capo/crds';

const HEADER = '# Generated from src/capo/api by scripts/gen-crds.ts (npm run gen:crds). Do not edit.\n';

export type { CrdFile };

export function crdFiles(): CrdFile[] {
  return ALL_KINDS.map((kind) => crdFile(kind, HEADER));
}
