/**
 * The CRD files of deploy/capo/crds as text: one YAML file per CRD, named like controller-gen
 * names them (`<group>_<plural>.yaml`). `npm run gen:crds` writes them; crds.test.ts fails when
 * the files differ from what this returns, so the code stays the one source of truth.
 */
import { stringify } from 'yaml';
import { customResourceDefinition } from './crd.ts';
import { ALL_KINDS } from './kinds.ts';

export const CRD_DIR = 'deploy/capo/crds';

const HEADER = '# Generated from src/capo/api by scripts/gen-capo-crds.ts (npm run gen:crds). Do not edit.\n';

export interface CrdFile {
  /** The file name inside deploy/capo/crds. */
  name: string;
  text: string;
}

export function crdFiles(): CrdFile[] {
  return ALL_KINDS.map((kind) => {
    const crd = customResourceDefinition(kind);
    // No line folding: one long description stays on one line, which is also how prettier keeps it.
    return {
      name: `${crd.spec.group}_${crd.spec.names.plural}.yaml`,
      text: HEADER + stringify(crd, { lineWidth: 0, singleQuote: true }),
    };
  });
}
