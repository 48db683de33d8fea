/**
 * Label selectors (metav1.LabelSelector): matching on the client side, for predicates, and
 * rendering as the `labelSelector` query string, for server-side filtering of an informer.
 */
import type { V1LabelSelector } from '@kubernetes/client-node';

export type LabelSelector = V1LabelSelector;

export function matchesLabelSelector(
  sel: LabelSelector,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const l = labels ?? {};
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.hasOwn(l, e.key);
    const value = l[e.key];
    switch (e.operator) {
      case 'In':
        if (!has || !(e.values ?? []).includes(value as string)) return false;
        break;
      case 'NotIn':
        if (has && (e.values ?? []).includes(value as string)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        throw new Error(`unknown label selector operator ${JSON.stringify(e.operator)}`);
    }
  }
  return true;
}

/** `a=b,c in (d,e),!f`: the query-string form the API server parses. */
export function labelSelectorString(sel: LabelSelector): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) parts.push(`${k}=${v}`);
  for (const e of sel.matchExpressions ?? []) {
    const values = [...(e.values ?? [])].sort().join(',');
    switch (e.operator) {
      case 'In':
        parts.push(`${e.key} in (${values})`);
        break;
      case 'NotIn':
        parts.push(`${e.key} notin (${values})`);
        break;
      case 'Exists':
        parts.push(e.key);
        break;
      case 'DoesNotExist':
        parts.push(`!${e.key}`);
        break;
      default:
        throw new Error(`unknown label selector operator ${JSON.stringify(e.operator)}`);
    }
  }
  return parts.join(',');
}
