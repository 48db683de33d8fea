import type { ClusterApi } from './api.ts';

/** Tag sets compare as CAPO compares them: sorted, without repeats. */
export function normaliseTags(tags: readonly string[] | undefined): string[] {
  return [...new Set(tags ?? [])].sort();
}

export function sameTags(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const x = normaliseTags(a);
  const y = normaliseTags(b);
  return x.length === y.length && x.every((t, i) => t === y[i]);
}

/** The cluster's tags on a floating IP (CAPO tags every one it makes); no write when they are there. */
export async function ensureFloatingIpTags(
  api: Pick<ClusterApi, 'network'>,
  fip: { id: string; tags?: string[] | undefined },
  tags: readonly string[] | undefined,
  signal: AbortSignal,
): Promise<void> {
  if (!tags?.length || sameTags(fip.tags, tags)) return;
  await api.network.tags.replace('floatingips', fip.id, tags, { signal });
}
