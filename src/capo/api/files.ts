/**
 * The CRD files of deploy/capo/crds as text: one YAML file per CRD, named like controller-gen
 * names them (`<group>_<plural>.yaml`). `npm run gen:crds` writes them; crds.test.ts fails when
 * the files differ from what this returns, so the code stays the one source of truth.
 *
 * CAPO's four kinds are served in v1beta2 too once a conversion webhook converts them
 * (`capoCrds({ conversion })`): v1beta1 stays the storage version, the one our controllers use.
 * Without a webhook they serve v1beta1 only — a CRD with conversion strategy None would hand out
 * v1beta1 objects labelled v1beta2.
 */
import {
  crdFile,
  customResourceDefinition,
  type CrdConversion,
  type CrdFile,
  type CustomResourceDefinition,
  type Kind,
} from '../../kube/crd/kind.ts';
import { ALL_KINDS } from './kinds.ts';
import { V1BETA2_KINDS } from './v1beta2/kinds.ts';

export const CRD_DIR = 'deploy/capo/crds';

const HEADER = '# Generated from src/capo/api by scripts/gen-crds.ts (npm run gen:crds). Do not edit.\n';

/** The version CAPO's multi-version kinds are stored in (CAPO's hub at the snapshot we follow). */
export const STORAGE_VERSION = 'v1beta1';

export type { CrdFile };

/** A CRD conversion that asks a webhook (the only kind that may serve v1beta2). */
export type WebhookConversion = Extract<CrdConversion, { strategy: 'Webhook' }>;

export interface CapoCrdOptions {
  /** The webhook that converts v1beta1 ↔ v1beta2; without it only v1beta1 is served. */
  conversion?: WebhookConversion;
}

/** Each kind's versions, in the order a CRD lists them: v1beta1 first, then v1beta2 when converted. */
function versionsOf(opts: CapoCrdOptions): { versions: Kind<object>[]; multi: boolean }[] {
  return ALL_KINDS.map((k) => {
    const v1beta2 = V1BETA2_KINDS.find((v) => v.crdName === k.crdName);
    return v1beta2 && opts.conversion
      ? { versions: [k, v1beta2], multi: true }
      : { versions: [k], multi: false };
  });
}

/** The CRDs of every kind CAPO's controllers serve or read. */
export function capoCrds(opts: CapoCrdOptions = {}): CustomResourceDefinition[] {
  return versionsOf(opts).map(({ versions, multi }) =>
    customResourceDefinition(
      versions,
      multi ? { storageVersion: STORAGE_VERSION, conversion: opts.conversion } : {},
    ),
  );
}

/** The CRDs as files (`capoCrds` as YAML). */
export function capoCrdFiles(opts: CapoCrdOptions = {}): CrdFile[] {
  return versionsOf(opts).map(({ versions, multi }) =>
    crdFile(versions, HEADER, multi ? { storageVersion: STORAGE_VERSION, conversion: opts.conversion } : {}),
  );
}

/** What deploy/capo/crds holds. */
export function crdFiles(): CrdFile[] {
  return capoCrdFiles();
}
