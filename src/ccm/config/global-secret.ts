/**
 * `[Global] secret-name` / `secret-namespace`: the in-tree provider's way of keeping credentials out
 * of the cloud.conf file (kubernetes PR #75062). OCCM never ported it; the CCM supports it: with both
 * set, the loader reads that Secret and lays its cloud.conf over the file (see secret-overlay.ts).
 * Like the in-tree provider, the keys fall back to SECRET_NAME and SECRET_NAMESPACE. `kubeconfig-path`
 * is accepted and ignored: the CCM reaches the API server with its own kubeconfig.
 */
import type { GcfgDocument, GcfgSection } from '../../lib/gcfg.ts';
import { gcfgSection } from '../../lib/gcfg.ts';
import { SectionReader, type ReadContext } from './section-reader.ts';
import type { SecretRef } from './types.ts';

/** The [Global] keys the CCM reads itself; the OpenStack config reader never sees them. */
export const CCM_GLOBAL_KEYS = ['secret-name', 'secret-namespace', 'kubeconfig-path'];

export function readSecretRef(
  ctx: ReadContext,
  env: Readonly<Record<string, string | undefined>>,
): SecretRef | undefined {
  const r = new SectionReader(ctx, gcfgSection(ctx.document, 'Global'), '[Global]');
  const kubeconfig = r.entry('kubeconfig-path');
  if (kubeconfig) r.warn(kubeconfig, 'ignored: the CCM reads the Secret with its own --kubeconfig');
  const name = r.text('secret-name') ?? nonEmpty(env.SECRET_NAME);
  const namespace = r.text('secret-namespace') ?? nonEmpty(env.SECRET_NAMESPACE);
  if (name !== undefined && namespace !== undefined) return { namespace, name };
  if (name === undefined && namespace === undefined) return undefined;
  const [set, missing, variable] =
    name !== undefined
      ? ['secret-name', 'secret-namespace', 'SECRET_NAME']
      : ['secret-namespace', 'secret-name', 'SECRET_NAMESPACE'];
  const entry = r.entry(set);
  const at = entry ? r.where(entry) : { file: 'environment', key: variable };
  ctx.problems.add(
    at.file,
    at.key,
    name ?? namespace,
    `${missing} is not set, so the Secret cannot be found`,
    'set both [Global] secret-name and secret-namespace (or SECRET_NAME and SECRET_NAMESPACE), or neither',
  );
  return undefined;
}

/** The document with the CCM's own [Global] keys removed, for the OpenStack config reader. */
export function withoutCcmGlobalKeys(document: GcfgDocument): GcfgDocument {
  return {
    file: document.file,
    sections: document.sections.map((s): GcfgSection =>
      s.name === 'global' && s.subsection === undefined
        ? { ...s, entries: s.entries.filter((e) => !CCM_GLOBAL_KEYS.includes(e.name)) }
        : s,
    ),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
