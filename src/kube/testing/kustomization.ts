/**
 * A kustomization's objects as `kubectl kustomize` builds them when it only lists resources (files
 * and directories of other kustomizations, in order), for tests that must not need kubectl. A
 * kustomization that does more (patches, generators, components, transformers) is refused, so a
 * test never reads something other than what kubectl would apply.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import type { KubernetesObject } from '../index.ts';

const ONLY = new Set(['apiVersion', 'kind', 'resources']);

export type ManifestObject = KubernetesObject & Record<string, unknown>;

/** The objects of the kustomization in `dir`, in the order kubectl builds them. */
export async function kustomizationObjects(dir: string): Promise<ManifestObject[]> {
  return (await kustomizationEntries(dir)).map((e) => e.object);
}

/** The objects of the kustomization in `dir`, with the file each came from. */
export async function kustomizationEntries(dir: string): Promise<{ file: string; object: ManifestObject }[]> {
  const k = parse(await readFile(join(dir, 'kustomization.yaml'), 'utf8')) as Record<string, unknown> & {
    resources?: string[];
  };
  const extra = Object.keys(k).filter((key) => !ONLY.has(key));
  if (extra.length)
    throw new Error(`${dir}/kustomization.yaml: ${extra.join(', ')} not read here; use kubectl kustomize`);
  const out: { file: string; object: ManifestObject }[] = [];
  for (const resource of k.resources ?? []) {
    const path = join(dir, resource);
    if ((await stat(path)).isDirectory()) {
      out.push(...(await kustomizationEntries(path)));
      continue;
    }
    for (const doc of parseAllDocuments(await readFile(path, 'utf8'))) {
      if (doc.errors.length) throw new Error(`${path}: ${doc.errors.map((e) => e.message).join('; ')}`);
      const object = doc.toJS() as ManifestObject | null;
      if (object) out.push({ file: path, object });
    }
  }
  return out;
}
