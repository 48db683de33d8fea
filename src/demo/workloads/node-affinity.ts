/**
 * A pod's required node affinity as the scheduler and the DaemonSet controller read it
 * (component-helpers `nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)`): the nodeSelector's
 * labels, and `requiredDuringSchedulingIgnoredDuringExecution`, whose terms are ORed and whose
 * requirements within a term are ANDed:
 *
 * - matchExpressions on the Node's labels: In, NotIn (true without the label), Exists,
 *   DoesNotExist, Gt and Lt (one integer value, compared with the label read as an integer);
 * - matchFields on `metadata.name` only, In or NotIn with exactly one value.
 *
 * A term with neither list matches no node; a requirement the API would call invalid (an unknown
 * operator, In without values, Gt with two) makes its term match no node, as upstream's lazy
 * error selector does (the DaemonSet controller drops the error and runs no pod there).
 */
import type {
  V1Node,
  V1NodeSelectorRequirement,
  V1NodeSelectorTerm,
  V1PodSpec,
} from '@kubernetes/client-node';
import { matchesLabelSelector } from '../../kube/index.ts';

/** The one field `matchFields` may name (`metav1.ObjectNameField`). */
const NODE_NAME_FIELD = 'metadata.name';

/** Why `node` is not one the pod may run on, or undefined when it is. */
export function requiredAffinityMismatch(node: V1Node, spec: V1PodSpec): string | undefined {
  const name = node.metadata?.name ?? '';
  const labels = node.metadata?.labels ?? {};
  for (const [k, v] of Object.entries(spec.nodeSelector ?? {})) {
    if (labels[k] !== v) return `node ${name} does not match the nodeSelector ${k}=${v}`;
  }
  const required = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return undefined;
  if (required.nodeSelectorTerms.some((term) => termMatches(term, name, labels))) return undefined;
  return `node ${name} matches none of the ${required.nodeSelectorTerms.length} required node affinity terms`;
}

function termMatches(
  term: V1NodeSelectorTerm,
  name: string,
  labels: Readonly<Record<string, string>>,
): boolean {
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  return (
    expressions.every((r) => labelRequirement(r, labels)) && fields.every((r) => fieldRequirement(r, name))
  );
}

function labelRequirement(r: V1NodeSelectorRequirement, labels: Readonly<Record<string, string>>): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
    case 'NotIn':
      return values.length > 0 && matchesLabelSelector({ matchExpressions: [r] }, labels);
    case 'Exists':
    case 'DoesNotExist':
      return values.length === 0 && matchesLabelSelector({ matchExpressions: [r] }, labels);
    case 'Gt':
    case 'Lt': {
      const bound = values.length === 1 ? integer(values[0]!) : undefined;
      const value = Object.hasOwn(labels, r.key) ? integer(labels[r.key]!) : undefined;
      if (bound === undefined || value === undefined) return false;
      return r.operator === 'Gt' ? value > bound : value < bound;
    }
    default:
      return false;
  }
}

function fieldRequirement(r: V1NodeSelectorRequirement, name: string): boolean {
  const values = r.values ?? [];
  if (r.key !== NODE_NAME_FIELD || values.length !== 1) return false;
  if (r.operator === 'In') return values[0] === name;
  if (r.operator === 'NotIn') return values[0] !== name;
  return false;
}

/** A label value as Go's `strconv.ParseInt(v, 10, 64)` reads it, or undefined. */
function integer(text: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const n = BigInt(text);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}
