/**
 * `POST pods/<name>/eviction` (policy/v1 Eviction), what `kubectl drain` uses when discovery
 * lists it: the pod is deleted unless its PodDisruptionBudget forbids it, by the rules of the
 * real EvictionREST — a pod that is Pending, finished or already deleting ignores budgets; more
 * than one budget is an error; a budget not yet observed or with no disruptions allowed is 429
 * (kubectl retries); otherwise one allowed disruption is spent and recorded on the budget.
 */
import { apiErrors, StatusError, successStatus } from './errors.ts';
import { asNumber, asObj, asString, metaOf, type Obj } from './json.ts';
import type { DeleteOptions, Rest } from './rest.ts';
import { fromLabelSelectorObject, matchesLabels } from './selectors.ts';
import type { ResourceDef } from './types.ts';

const TOO_MANY = "Cannot evict pod as it would violate the pod's disruption budget.";

function canIgnoreBudget(pod: Obj): boolean {
  const phase = asString(asObj(pod.status)?.phase) ?? 'Pending';
  return ['Pending', 'Succeeded', 'Failed'].includes(phase) || !!metaOf(pod).deletionTimestamp;
}

function isReady(pod: Obj): boolean {
  const conditions = (asObj(pod.status)?.conditions as unknown[] | undefined) ?? [];
  return conditions.some((c) => asObj(c)?.type === 'Ready' && asObj(c)?.status === 'True');
}

function budgetError(message: string): StatusError {
  return new StatusError(429, 'TooManyRequests', TOO_MANY, {
    causes: [{ reason: 'DisruptionBudget', message }],
  });
}

export interface EvictionDeps {
  rest: Rest;
  pods: ResourceDef;
  budgets: ResourceDef;
  now(): Date;
}

/** Evicts a pod; the answer is the Status the real server sends with 201. */
export function evict(
  deps: EvictionDeps,
  namespace: string,
  name: string,
  eviction: unknown,
  opts: DeleteOptions,
): Obj {
  const e = asObj(eviction) ?? {};
  const evicted = asString(metaOf(e).name);
  if (evicted !== undefined && evicted !== name)
    throw apiErrors.badRequest('name in URL does not match name in Eviction object');
  const pod = deps.rest.get(deps.pods, namespace, name);
  const done = (): Obj => {
    if (!opts.dryRun) deps.rest.delete(deps.pods, namespace, name, opts);
    return { ...successStatus({}, 201) };
  };
  if (canIgnoreBudget(pod)) return done();
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(asObj(metaOf(pod).labels) ?? {}))
    if (typeof v === 'string') labels[k] = v;
  const budgets = deps.rest.list(deps.budgets, namespace, {}).items.filter((b) => {
    const sel = fromLabelSelectorObject(asObj(b.spec)?.selector);
    return sel !== undefined && sel.length > 0 && matchesLabels(sel, labels);
  });
  if (budgets.length > 1)
    throw apiErrors.internal(
      'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    );
  const pdb = budgets[0];
  if (!pdb) return done();
  const pdbName = asString(metaOf(pdb).name) ?? '';
  if (!isReady(pod) && asObj(pdb.spec)?.unhealthyPodEvictionPolicy === 'AlwaysAllow') return done();
  const status = asObj(pdb.status) ?? {};
  if ((asNumber(status.observedGeneration) ?? 0) < (asNumber(metaOf(pdb).generation) ?? 0))
    throw budgetError(`The disruption budget ${pdbName} is still being processed by the server.`);
  const allowed = asNumber(status.disruptionsAllowed) ?? 0;
  if (allowed < 0)
    throw apiErrors.forbidden(
      { group: 'policy', resource: 'poddisruptionbudget' },
      pdbName,
      'pdb disruptions allowed is negative',
    );
  if (allowed === 0) {
    throw budgetError(
      `The disruption budget ${pdbName} needs ${asNumber(status.desiredHealthy) ?? 0} healthy pods and has ${asNumber(status.currentHealthy) ?? 0} currently`,
    );
  }
  if (!opts.dryRun) {
    const disrupted = {
      ...(asObj(status.disruptedPods) ?? {}),
      [name]: deps
        .now()
        .toISOString()
        .replace(/\.\d{3}Z$/, 'Z'),
    };
    deps.rest.update(
      deps.budgets,
      namespace,
      pdbName,
      { ...pdb, status: { ...status, disruptionsAllowed: allowed - 1, disruptedPods: disrupted } },
      { subresource: 'status', manager: 'kube-apiserver', fieldValidation: 'Ignore', dryRun: false },
    );
  }
  return done();
}
